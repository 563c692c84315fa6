import type { FastifyInstance } from 'fastify';
import { ErrorCode, HostError } from '../core/index.js';

/** `testing.forceEngineVersionRange` (capabilities.schema.json). */
export interface ForceEngineVersionRange {
  min: number;
  max: number;
}

const HEADER = 'x-force-engine-version';

/**
 * The `X-Force-Engine-Version` header on `POST /v1/runs` (version-negotiation.md §"Conformance via
 * X-Force-Engine-Version"). With the test seams on, `range` is advertised as `testing.forceEngineVersionRange` and a
 * version inside it runs the run as usual (this host has one engine version, so the range is that version alone); a
 * version outside it, or no integer, is 400 `unsupported_force_engine_version` with the range. With the seams off
 * (`range` undefined) the header is 403 `force_engine_version_forbidden`: this host has no other test keys.
 */
export function registerForceEngineVersion(app: FastifyInstance, range: ForceEngineVersionRange | undefined): void {
  app.addHook('preHandler', async (req) => {
    if (req.method !== 'POST' || req.url.split('?')[0] !== '/v1/runs') return;
    const raw = req.headers[HEADER];
    if (raw === undefined) return;
    if (!range)
      throw new HostError(ErrorCode.FORCE_ENGINE_VERSION_FORBIDDEN, 'X-Force-Engine-Version needs the test seams', {
        path: 'header:X-Force-Engine-Version',
      });
    const v = typeof raw === 'string' && /^(0|[1-9][0-9]*)$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
    if (!(v >= range.min && v <= range.max))
      throw new HostError(
        ErrorCode.UNSUPPORTED_FORCE_ENGINE_VERSION,
        `engine version ${String(raw)} is not forceable`,
        {
          requested: String(raw),
          min: range.min,
          max: range.max,
        },
      );
  });
}
