/**
 * The v2 seats of an interrupt resolution (`schemas/v2/run-event-payloads.schema.json` `interruptResolved`, which
 * `approvalReceived` aliases, RFC 0171 §A.4 E4): `resolvedBy`, the resolving Subject, and `decision`, the approval
 * decision (`granted | rejected | overridden`). The engine's era-2 payloads carry them in v1 form — the resolver's
 * token principal as `decidedBy` (v1 interrupt.md) and the approval `action` — so the v2 read derives them from those:
 * a principal is the `api-key` Subject of this host's tokens (the same rule as a run's owner, owner.ts); `accept` and
 * `edit-accept` are `granted`, `reject` and `timeout` `rejected` (RFC 0183 §A.1). A `refine` decides neither, and a
 * timeout has no resolver, so neither is invented for them. Pure: the payload is not changed.
 */
import { ownerOf } from './owner.js';

/** The v2 types whose payload is the unified `interruptResolved` shape and whose v1 form names a resolver. */
const RESOLUTION_TYPES: ReadonlySet<string> = new Set(['interrupt.resolved', 'approval.received']);

const DECISIONS: Readonly<Record<string, string>> = {
  accept: 'granted',
  'edit-accept': 'granted',
  reject: 'rejected',
  timeout: 'rejected',
};

/** `payload` with `resolvedBy` and `decision` derived where its v1 fields say them; `undefined` when nothing is. */
export function withResolutionSeats(type: string, payload: unknown): Record<string, unknown> | undefined {
  if (!RESOLUTION_TYPES.has(type) || !payload || typeof payload !== 'object' || Array.isArray(payload))
    return undefined;
  const p = payload as Record<string, unknown>;
  const approval = type === 'approval.received' || p.kind === 'approval';
  const add: Record<string, unknown> = {};
  if (p.resolvedBy === undefined && typeof p.decidedBy === 'string' && p.decidedBy.length > 0)
    add.resolvedBy = ownerOf(p.decidedBy).subject;
  const decision = typeof p.action === 'string' ? DECISIONS[p.action] : undefined;
  if (approval && p.decision === undefined && decision) add.decision = decision;
  // approval.received is the approval kind by its type; its v2 shape names the kind (the field is optional there).
  if (type === 'approval.received' && p.kind === undefined) add.kind = 'approval';
  return Object.keys(add).length ? { ...p, ...add } : undefined;
}
