/**
 * What one `ctx.mcp` revision negotiation decided, as the `negotiation.decided` record v2 interop.md §The audit event
 * requires of every outcome, the refused one included. Field names are those of the published payload
 * (`run-event-payloads.schema.json#/$defs/negotiationDecided`, as RFC 0242 §Motivation quotes it:
 * `{ protocol, outcome: accepted | refused, version?, floor?, peerDigest?, reason?, at }`, plus §A.1 `requested`).
 * Content-free: the peer is a digest of its origin, never the origin (interop.md §The audit event).
 */
import { createHash } from 'node:crypto';
import type { Transport } from '@modelcontextprotocol/client';
import type { McpServerEntry } from './mcp-servers-config.js';

/** The event type, registered in the v2 run-event enum (RFC 0175 §D.3). */
export const NEGOTIATION_DECIDED = 'negotiation.decided';

/** The `negotiationDecided` payload this host writes for an MCP negotiation. */
export interface NegotiationDecided {
  protocol: 'mcp';
  /** A downgrade is an `accepted` record whose `version` differs from `requested` (RFC 0242 §A.3). */
  outcome: 'accepted' | 'refused';
  /** The revision the host asked for first: the modern one through `server/discover`, else its top `initialize` rung. */
  requested: string;
  /** The revision landed on (absent when refused). */
  version?: string;
  /** The advertised `minimumRevision`. */
  floor: string;
  /** The SHA-256 (hex) of the server's origin (`scheme://host:port`, or `stdio:<command line>` for a child process). */
  peerDigest: string;
  /** Why it was refused: `below-floor`, `unsupported-revision` (outside the ladder) or `negotiation-failed`. */
  reason?: string;
  /** When the negotiation was decided (ISO 8601). */
  at: string;
}

/**
 * Where a decision is recorded: the calling run's log when the negotiation happens inside a run (RFC 0242 §B.1).
 * A rejection fails the connection (a negotiation that leaves no record is not used).
 */
export type NegotiationRecorder = (decision: NegotiationDecided) => Promise<void>;

/** The content-free digest of a configured server's origin. */
export function peerDigestOf(entry: McpServerEntry): string {
  const origin =
    entry.transport === 'stdio'
      ? `stdio:${[entry.command, ...(entry.args ?? [])].join(' ')}`
      : new URL(entry.url).origin;
  return createHash('sha256').update(origin).digest('hex');
}

/**
 * Remembers the revision the server names in its `initialize` result on the transport the SDK connects with. The
 * handler is set before `connect`, so the SDK's protocol layer chains it (it keeps a handler it finds) and the SDK
 * still decides; this only lets a refusal name the revision it refused.
 */
export function watchInitializeOffer(transport: Transport): () => string | undefined {
  let offered: string | undefined;
  const prior = transport.onmessage;
  transport.onmessage = (message, extra) => {
    const result = (message as { result?: { protocolVersion?: unknown } }).result;
    if (result && typeof result.protocolVersion === 'string') offered = result.protocolVersion;
    prior?.(message, extra);
  };
  return () => offered;
}
