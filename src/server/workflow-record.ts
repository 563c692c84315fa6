import type { DurableLedger } from '../ledger/ledger-types.js';
import type { WorkflowRecorder } from '../openwop/workflows.js';

/**
 * The host ledger entry of a workflow registered or replaced by a principal (issue 20): `workflow.registered` with
 * the id, the new version's sequence and digest, the digest it replaced (null for the first) and the principal,
 * appended in the transaction that stores the version, so neither is written without the other.
 */
export function workflowRecorder(ledger: DurableLedger): WorkflowRecorder {
  return async (t, v, who) => {
    await ledger.appendIn(t, [
      {
        kind: 'workflow.registered',
        workflow_id: v.workflowId,
        workflow_seq: v.seq,
        workflow_digest: v.digest,
        replaced_digest: v.replacedDigest,
        source: v.source,
        principal: { kind: 'human', id: who.id, name: who.name, role: who.role },
      },
    ]);
  };
}
