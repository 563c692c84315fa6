import type { FastifyInstance } from 'fastify';
import { ErrorCode, HostError, isJsonObject } from '../core/index.js';
import type { OpenwopHost } from '../openwop/host.js';
import { openwopSchemas, schemaId } from '../openwop/schemas.js';
import type { EnvelopeCatalog } from '../openwop/services/envelope-validation.js';
import { UNIVERSAL_ENVELOPES } from '../openwop/services/envelope-validation.js';
import { callerOf } from './auth.js';
import type { CapabilityOverlay } from './capability-overlay.js';
import { V1_SEAMS } from './seam-mount.js';
import type { SeamMount } from './seam-mount.js';

/** The seam's path (RFC 0021 §A; the conformance aiEnvelope.* scenarios). */
export const ENVELOPE_ACCEPT_SEAM_PATH = `${V1_SEAMS.prefix}/envelope/accept`;

type RefusalMode = 'fail-node' | 'discard-and-warn';
interface ValidationDetail {
  path: string;
  message: string;
}

/** `EnvelopeOutcome` of ai-envelope.md §Primitive; a gated outcome also lists `allowedKinds` (the scenarios read it). */
export type EnvelopeOutcome =
  | { status: 'accepted'; envelopeId: string; recordedEventIds: string[] }
  | {
      status: 'gated';
      reason: 'envelope_contract_violation';
      gate: { refusedType: string; acceptedTypes: string[]; refusalMode: RefusalMode };
      allowedKinds: string[];
    }
  | { status: 'invalid'; reason: 'capability_required' | 'shape' | 'payload'; details: ValidationDetail[] };

/** What the seam's body may set beside the envelope. */
export interface AcceptOptions {
  /** The host's kind catalog for this probe (default: the advertised `supportedEnvelopes`). */
  hostSupportedEnvelopes?: string[];
  /** The emitting node's Envelope Contract `accepts` (absent: no node gate). */
  nodeAllowedKinds?: string[];
  refusalMode?: RefusalMode;
}

const isUniversal = (kind: string): boolean => (UNIVERSAL_ENVELOPES as readonly string[]).includes(kind);
const details = (issues: Array<{ path: string; message: string }>): ValidationDetail[] =>
  issues.map((i) => ({ path: i.path, message: i.message }));

/**
 * The acceptor's decision, in the order of ai-envelope.md §Primitive: shape (ai-envelope.schema.json), kind against
 * the host catalog (universals always pass), payload against the kind's schema when the host has one, then the node's
 * Envelope Contract. A refusal by a gate is `gated` with `envelope_contract_violation`; a schema failure `invalid`.
 */
export function decideEnvelope(
  envelope: unknown,
  catalog: EnvelopeCatalog | undefined,
  o: AcceptOptions,
): EnvelopeOutcome {
  const shape = openwopSchemas().check(schemaId('ai-envelope'), envelope);
  if (shape.length || !isJsonObject(envelope)) return { status: 'invalid', reason: 'shape', details: details(shape) };
  const kind = String(envelope.type);
  const refusalMode = o.refusalMode ?? 'fail-node';
  const gated = (accepted: string[]): EnvelopeOutcome => {
    const acceptedTypes = [...new Set([...UNIVERSAL_ENVELOPES, ...accepted])];
    return {
      status: 'gated',
      reason: 'envelope_contract_violation',
      gate: { refusedType: kind, acceptedTypes, refusalMode },
      allowedKinds: acceptedTypes,
    };
  };
  const hostKinds = o.hostSupportedEnvelopes ?? catalog?.kinds() ?? [];
  // The host gate fires before the node gate (capability handshake integration).
  if (!isUniversal(kind) && !hostKinds.includes(kind)) return gated(hostKinds);
  const payload = isUniversal(kind)
    ? openwopSchemas()
        .check(schemaId(`envelopes/${kind}`), envelope.payload)
        .map((i) => ({ ...i, path: `/payload${i.path === '/' ? '' : i.path}` }))
    : catalog?.has(kind)
      ? catalog.check(envelope)
      : [];
  if (payload.length) return { status: 'invalid', reason: 'payload', details: details(payload) };
  if (!isUniversal(kind) && o.nodeAllowedKinds && !o.nodeAllowedKinds.includes(kind)) return gated(o.nodeAllowedKinds);
  return { status: 'accepted', envelopeId: String(envelope.envelopeId), recordedEventIds: [] };
}

function stringList(v: unknown, path: string): string[] | undefined {
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string'))
    throw new HostError(ErrorCode.INVALID_ARGUMENT, `${path} is an array of kinds`, { path });
  return v as string[];
}

/**
 * `POST /v1/host/sample/envelope/accept` `{envelope, hostSupportedEnvelopes?, nodeAllowedKinds?, projectTo?}` → 200
 * with the {@link EnvelopeOutcome} (RFC 0021 §A): registered with the other test seams, and only where the host
 * claims the `aiEnvelope` family. When the capability toggle has `host.aiEnvelope.supported` off, every envelope is
 * `invalid` with reason `capability_required` before any contract gate runs. A missing envelope or a malformed
 * option is 400 `invalid_argument` (`details.path`). Not honoured: `projectTo` (no test event log is written),
 * `priorCorrelations`, `persistedDedup`, `counters`, `schemaVersionFloor`, `byokCanaries`, `approvalGateContext`.
 */
export function registerEnvelopeAcceptSeam(
  app: FastifyInstance,
  host: OpenwopHost,
  catalog: EnvelopeCatalog,
  overlay: CapabilityOverlay,
  mount: SeamMount = V1_SEAMS,
): void {
  app.post(`${mount.prefix}/envelope/accept`, async (req) => {
    callerOf(req);
    const body = req.body;
    if (!isJsonObject(body) || body.envelope === undefined)
      throw new HostError(ErrorCode.INVALID_ARGUMENT, 'envelope is required', { path: '/envelope' });
    const projectTo = isJsonObject(body.projectTo) ? body.projectTo : {};
    const mode = projectTo.refusalMode;
    if (mode !== undefined && mode !== 'fail-node' && mode !== 'discard-and-warn')
      throw new HostError(ErrorCode.INVALID_ARGUMENT, 'refusalMode is fail-node or discard-and-warn', {
        path: '/projectTo/refusalMode',
      });
    const o: AcceptOptions = {};
    const hostKinds = stringList(body.hostSupportedEnvelopes, '/hostSupportedEnvelopes');
    const nodeKinds = stringList(body.nodeAllowedKinds, '/nodeAllowedKinds');
    if (hostKinds) o.hostSupportedEnvelopes = hostKinds;
    if (nodeKinds) o.nodeAllowedKinds = nodeKinds;
    if (mode) o.refusalMode = mode;
    if (!overlay.resolve('host.aiEnvelope.supported', host.capabilities()))
      return {
        status: 'invalid',
        reason: 'capability_required',
        details: [{ path: '/type', message: 'the host does not claim host.aiEnvelope (capability toggle)' }],
      };
    return decideEnvelope(body.envelope, catalog, o);
  });
}
