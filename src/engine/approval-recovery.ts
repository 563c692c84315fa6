import { ErrorCode, HostError, toHostError } from '../core/index.js';
import type { PermitService } from '../policy/permits.js';
import type { PolicyGate } from '../policy/policy-gate.js';

/** Who revokes the permit of an interrupted call (recorded on the `permit.revoke` entry). */
const RECOVERY = { kind: 'system' as const, id: 'host:recovery', name: 'host' };

/**
 * Settles approvals a previous host process took for a call and never journalled an intent for (killed between
 * consuming the approval and journalling the intent; issue 16, HOST-041, 047, 070). Nothing was sent: no intent
 * means no send (HOST-093). Each such approval still `consumed` has its permit revoked (host side first, then the
 * endpoint; recorded `permit.revoke`) and reads `approved_not_executed` with `MHS.HOST.INTERRUPTED` (recorded
 * `approval {event:"not_executed"}`). Approvals are single-use: a new call asks for a new one.
 *
 * A permit another running process has already claimed (sent) is left alone, and its approval with it: the atomic
 * revoke refuses it. Returns the approval ids settled; a failure of one goes to `onError` and the others go on.
 */
export async function settleInterruptedApprovals(
  candidates: ReadonlyArray<{ approvalId: string; permitId: string | null }>,
  deps: { gate: PolicyGate; permits: PermitService; onError?: (e: HostError) => void },
): Promise<string[]> {
  const settled: string[] = [];
  for (const c of candidates) {
    try {
      if (await settleOne(c, deps)) settled.push(c.approvalId);
    } catch (err) {
      deps.onError?.(toHostError(err));
    }
  }
  return settled;
}

async function settleOne(
  c: { approvalId: string; permitId: string | null },
  deps: { gate: PolicyGate; permits: PermitService },
): Promise<boolean> {
  const req = await deps.gate.get(c.approvalId);
  if (req?.status !== 'consumed') return false;
  const interrupted = new HostError(
    ErrorCode.HOST_INTERRUPTED,
    `the host stopped after taking approval ${c.approvalId} and before journalling its command: nothing was sent`,
    { approval_id: c.approvalId, ...(c.permitId ? { permit_id: c.permitId } : {}) },
  );
  if (c.permitId) {
    const permit = await deps.permits.get(c.permitId);
    if (permit?.state === 'claimed') return false; // sent by its call (HOST-070): not interrupted
    if (permit?.state === 'issued') {
      try {
        await deps.permits.revoke(c.permitId, RECOVERY, `not_executed: ${ErrorCode.HOST_INTERRUPTED}`);
      } catch (err) {
        // Claimed in between by a call of a running process: it was sent.
        if (toHostError(err).code === ErrorCode.CONFLICT) return false;
        throw err;
      }
    }
  }
  // The permit is handled above; the gate only records the approval as approved, not executed.
  await deps.gate.notExecuted(
    {
      kind: 'allow',
      approval: {
        approval_id: req.approval_id,
        decision: 'approve',
        method: req.method,
        principals: req.votes.map((v) => ({ kind: 'human' as const, id: v.principal.id })),
        input_digest: req.input_digest,
        decided_at: req.decided_at ?? '',
        evidence_ref: `approval:${req.approval_id}`,
      },
    },
    interrupted,
  );
  return true;
}
