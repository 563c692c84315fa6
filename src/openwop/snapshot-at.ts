import { SnapshotFold } from './snapshot.js';
import type { RunSnapshot } from './snapshot.js';
import { initialVariables } from './prepared-run.js';
import { waitingStatusOfKind } from './run-interrupts.js';
import type { StoredRun } from './store.js';
import type { RunError, RunEvent, RunStatus } from './types.js';

const TERMINAL: Record<string, RunStatus> = {
  'run.completed': 'completed',
  'run.failed': 'failed',
  'run.cancelled': 'cancelled',
};

/**
 * The run as it stood right after each event of its log, folded from the log alone (status, variables, start and end
 * times, error are the log's, not the run row's current ones): the `state.snapshot` of the `values` stream mode (v1
 * stream-modes.md, v2 events.md §The events channel). Incremental: `apply` each event in log order, `snapshot` at any
 * point. Child runs are not listed (their point-in-time status is not in this log).
 */
export class RunStateAt {
  private readonly fold: SnapshotFold;
  private readonly row: StoredRun;
  private lifecycle: RunStatus = 'pending';

  constructor(private readonly run: StoredRun) {
    this.fold = new SnapshotFold(run.definition);
    let variables: Record<string, unknown>;
    try {
      variables = initialVariables(run.definition, run.inputs);
    } catch {
      variables = {};
    }
    this.row = { ...run, variables, startedAt: null, completedAt: null, error: null };
  }

  apply(e: RunEvent): void {
    if (e.sequence <= this.fold.lastSequence) return;
    this.fold.apply(e);
    if (e.type === 'run.started' || e.type === 'run.resumed' || e.type === 'run.resuming') this.lifecycle = 'running';
    else if (e.type === 'run.paused') this.lifecycle = 'paused';
    else if (e.type === 'variable.changed') this.row.variables[e.payload.name as string] = e.payload.next;
    // The row's start and end fields are written once, with the event that sets them.
    if (e.type === 'run.started') this.row.startedAt = this.run.startedAt ?? e.timestamp;
    const terminal = TERMINAL[e.type];
    if (terminal) {
      this.lifecycle = terminal;
      this.row.completedAt = this.run.completedAt ?? e.timestamp;
      this.row.error = this.run.error ?? (e.payload.error as RunError | undefined) ?? null;
    }
  }

  snapshot(): RunSnapshot {
    const snap = this.fold.snapshot({ ...this.row, status: this.lifecycle, variables: { ...this.row.variables } });
    const waiting = snap.pendingInterrupts[0];
    if (snap.status === 'running' && waiting) snap.status = waitingStatusOfKind(waiting.kind);
    return snap;
  }
}
