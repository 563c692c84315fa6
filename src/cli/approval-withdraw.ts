import { isoAt } from '../core/index.js';
import type { HostRuntime } from '../engine/host-runtime.js';
import type { ApprovalRequest } from '../policy/index.js';

/**
 * Ctrl-C (SIGINT) or SIGTERM while a CLI call waits for an operator: the approvals this process asked for
 * and that are still pending are withdrawn, so no operator approves a call nobody waits for any more:
 * each is set `voided` (compare-and-set: a decision that won the race stands) and recorded as an `approval`
 * entry `voided` with reason `withdrawn_by_caller` (HOST-045). Then the process exits 130 / 143; a command
 * already sent is reconciled by the next host start, as after any crash (HOST-091). Returns the uninstaller.
 */
export function withdrawOnSignal(rt: HostRuntime, err: (line: string) => void): () => void {
  const mine = new Set<string>();
  const offEvents = rt.services.events.subscribe((e) => {
    const a = e.data.approval as ApprovalRequest | undefined;
    if (e.type === 'approval.requested' && a) mine.add(a.approval_id);
  });
  const withdraw = async (): Promise<void> => {
    for (const id of mine) {
      const req = await rt.services.gate.get(id);
      if (!req || req.status !== 'pending') continue;
      const next = {
        ...req,
        status: 'voided' as const,
        reason: 'withdrawn_by_caller',
        decided_at: isoAt(rt.clock.now()),
      };
      if (!(await rt.services.gate.store.update(next, 'pending', req.votes.length))) continue;
      await rt.ledger.append({
        kind: 'approval',
        event: 'voided',
        approval_id: id,
        endpoint_id: req.endpoint_id,
        device_id: req.device_id,
        capability_id: req.capability_id,
        session_id: req.session_id,
        input_digest: req.input_digest,
        reason: 'withdrawn_by_caller',
      });
      err(`approval ${id} withdrawn (interrupted; the command was not sent)`);
    }
  };
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    void withdraw()
      .catch(() => undefined)
      .finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return () => {
    offEvents();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
}
