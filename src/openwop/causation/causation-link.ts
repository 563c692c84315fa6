import { ErrorCode, HostError } from '../../core/index.js';

/** What caused a run on another host (RFC 0040 §C `parent.cause`). */
export const ANCESTRY_CAUSES = ['mcp-tool-call', 'a2a-message', 'core.subWorkflow', 'core.dispatch'] as const;
/** One of {@link ANCESTRY_CAUSES}. */
export type AncestryCause = (typeof ANCESTRY_CAUSES)[number];

/**
 * The causation link a run carries in `metadata.causation`: set by `core.dispatch` for a local child, and sent by
 * another host with `POST /v1/runs` for a cross-host one (RFC 0040 §A/§C).
 */
export interface CausationLink {
  parentRunId: string;
  parentNodeId?: string;
  /** The event on the parent's host that caused this run (becomes `run.started.causationId`). */
  eventId?: string;
  /** The parent's host (`crossHostCausation.hostId` there). */
  hostId: string;
  /** The parent host's discovery document URL (RFC 0040 §C `wellKnownUrl`), required when the parent is remote. */
  wellKnownUrl?: string;
  cause?: AncestryCause;
}

const W3C_TRACEPARENT = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

function bad(path: string, message: string): HostError {
  return new HostError(ErrorCode.VALIDATION_ERROR, `${path}: ${message}`, {
    errors: [{ path, message, keyword: 'causation' }],
  });
}

function str(o: Record<string, unknown>, k: string, required: boolean, max = 256): string | undefined {
  const v = o[k];
  if (v === undefined && !required) return undefined;
  if (typeof v !== 'string' || v.length < 1 || v.length > max)
    throw bad(`/metadata/causation/${k}`, `must be a string of 1-${max} characters`);
  return v;
}

/** The link in a run's metadata, or undefined; one that is present but malformed raises `validation_error`. */
export function causationOf(metadata: Record<string, unknown> | undefined): CausationLink | undefined {
  const c = metadata?.causation;
  if (c === undefined) return undefined;
  if (typeof c !== 'object' || c === null || Array.isArray(c)) throw bad('/metadata/causation', 'must be an object');
  const o = c as Record<string, unknown>;
  const link: CausationLink = { parentRunId: str(o, 'parentRunId', true, 128)!, hostId: str(o, 'hostId', true)! };
  const parentNodeId = str(o, 'parentNodeId', false, 128);
  const eventId = str(o, 'eventId', false, 128);
  const wellKnownUrl = str(o, 'wellKnownUrl', false, 2048);
  if (parentNodeId) link.parentNodeId = parentNodeId;
  if (eventId) link.eventId = eventId;
  if (wellKnownUrl) {
    let u: URL | undefined;
    try {
      u = new URL(wellKnownUrl);
    } catch {
      u = undefined;
    }
    if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:'))
      throw bad('/metadata/causation/wellKnownUrl', 'must be an http(s) URL');
    link.wellKnownUrl = wellKnownUrl;
  }
  if (o.cause !== undefined) {
    if (!ANCESTRY_CAUSES.includes(o.cause as AncestryCause))
      throw bad('/metadata/causation/cause', `must be one of ${ANCESTRY_CAUSES.join(', ')}`);
    link.cause = o.cause as AncestryCause;
  }
  return link;
}

/**
 * Checks a `POST /v1/runs` causation link from another host: the link must name that host's run, the causing
 * event and where the host is found (`wellKnownUrl`), so the ancestry endpoint can point back to it.
 */
export function checkInboundCausation(metadata: Record<string, unknown> | undefined, localHostId: string): void {
  const link = causationOf(metadata);
  if (!link || link.hostId === localHostId) return;
  if (!link.eventId) throw bad('/metadata/causation/eventId', 'is required for a parent on another host');
  if (!link.wellKnownUrl) throw bad('/metadata/causation/wellKnownUrl', 'is required for a parent on another host');
}

/**
 * The caller's W3C `traceparent` when it is a valid one, else undefined: per W3C Trace Context a receiver ignores
 * a malformed header and starts a new trace rather than refusing the request.
 */
export function validTraceparent(v: unknown): string | undefined {
  return typeof v === 'string' && W3C_TRACEPARENT.test(v) ? v : undefined;
}

/** The trace id of a W3C traceparent. */
export function traceIdOf(traceparent: string): string {
  return traceparent.split('-')[1]!;
}

function remoteLink(metadata: Record<string, unknown>, localHostId: string | undefined): CausationLink | undefined {
  let link: CausationLink | undefined;
  try {
    link = causationOf(metadata);
  } catch {
    return undefined;
  }
  return link && localHostId && link.hostId !== localHostId && link.eventId ? link : undefined;
}

/** The `run.started` envelope `causationId` of a run caused from another host (RFC 0040 §A): the causing event there. */
export function causationIdOf(
  metadata: Record<string, unknown>,
  localHostId: string | undefined,
): { causationId?: string } {
  const link = remoteLink(metadata, localHostId);
  return link ? { causationId: link.eventId! } : {};
}

/** The `run.started` payload `causationHostId` of a run caused from another host (RFC 0040 §A): that host's id. */
export function causationHostIdOf(
  metadata: Record<string, unknown>,
  localHostId: string | undefined,
): { causationHostId?: string } {
  const link = remoteLink(metadata, localHostId);
  return link ? { causationHostId: link.hostId } : {};
}
