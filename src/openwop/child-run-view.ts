import type { RunSnapshot } from './snapshot.js';
import type { StoredRun } from './store.js';

/**
 * A parent's snapshot with its child runs (`childRuns`). A running parent whose every running node waits on a
 * suspended child shows that wait: the parent/child interrupt profile reads the parent as waiting while its child's
 * gate is open.
 */
export function withChildRuns(snap: RunSnapshot, children: readonly StoredRun[]): RunSnapshot {
  if (!children.length) return snap;
  snap.childRuns = children.map((c) => ({
    runId: c.runId,
    workflowId: c.workflowId,
    status: c.status,
    ...(c.parentNodeId ? { parentNodeId: c.parentNodeId } : {}),
  }));
  if (snap.status === 'running') {
    const running = Object.keys(snap.nodeStates).filter((id) => snap.nodeStates[id]!.status === 'running');
    const waitOf = (nodeId: string) =>
      children.find((c) => c.parentNodeId === nodeId && c.status.startsWith('waiting-'))?.status;
    const waits = running.map(waitOf);
    if (running.length && waits.every((w) => w !== undefined)) snap.status = waits[0]!;
  }
  return snap;
}
