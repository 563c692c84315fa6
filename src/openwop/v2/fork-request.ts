import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import { ErrorCode, HostError } from '../../core/index.js';
import type { ForkRequest } from '../fork.js';
import { fromV2Configurable } from './configurable.js';

// v2 runs.md §Fork: `{ mode, fromSeq?, runOptionsOverlay? }`; the overlay's `configurable` is the closed v2 one
// (configurable.ts), mapped to the engine's run options over the source run's.
const BODY_SCHEMA = {
  type: 'object',
  required: ['mode'],
  properties: {
    mode: { enum: ['replay', 'branch'] },
    fromSeq: { type: 'integer', minimum: 0 },
    runOptionsOverlay: {
      type: 'object',
      properties: {
        tags: { type: 'array', items: { type: 'string', maxLength: 256 }, maxItems: 100 },
        metadata: { type: 'object' },
        configurable: { type: 'object' },
      },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
} as const;

let validate: ValidateFunction | undefined;

/**
 * Maps a v2 `POST /runs/{runId}:fork` body to the engine's fork request (v2 runs.md §Fork). Raises
 * `validation_error` for a malformed body, a `branch` without `fromSeq` or a `replay` with a non-empty overlay, and
 * `fork_point_invalid` when `fromSeq` is not a sequence of the source log (`lastSequence` its last).
 */
export function toForkRequest(body: unknown, sourceLastSequence: number): ForkRequest {
  validate ??= new Ajv2020({ allErrors: true, strict: false }).compile(BODY_SCHEMA);
  if (!validate(body ?? {})) {
    const errors = (validate.errors ?? []).map((e) => ({ path: e.instancePath || '/', message: e.message ?? '' }));
    throw new HostError(ErrorCode.VALIDATION_ERROR, 'the fork body is not valid', { errors });
  }
  const b = body as ForkRequest;
  const overlay = b.runOptionsOverlay ?? {};
  if (b.mode === 'replay' && Object.keys(overlay).length)
    throw new HostError(ErrorCode.VALIDATION_ERROR, 'a replay fork takes no runOptionsOverlay', {
      field: 'runOptionsOverlay',
    });
  if (b.mode === 'branch' && b.fromSeq === undefined)
    throw new HostError(ErrorCode.VALIDATION_ERROR, 'a branch fork needs fromSeq', { field: 'fromSeq' });
  const fromSeq = b.fromSeq ?? 0;
  // A replay from 0 of an empty log re-executes everything; any other point must be a sequence the log holds.
  if (fromSeq > Math.max(sourceLastSequence, 0))
    throw new HostError(ErrorCode.FORK_POINT_INVALID, `fromSeq ${fromSeq} is not in the source log`, {
      lastSequence: sourceLastSequence,
    });
  if (!b.runOptionsOverlay) return { mode: b.mode, fromSeq };
  const { configurable, ...rest } = b.runOptionsOverlay;
  const runOptionsOverlay =
    configurable === undefined
      ? rest
      : { ...rest, configurable: fromV2Configurable(configurable, '/runOptionsOverlay/configurable') };
  return { mode: b.mode, fromSeq, runOptionsOverlay };
}
