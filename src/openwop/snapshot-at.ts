import { buildSnapshot } from './snapshot.js';
import type { RunSnapshot } from './snapshot.js';
import { initialVariables } from './run-manager.js';
import { waitingStatusOfKind } from './run-interrupts.js';
import type { StoredRun } from './store.js';
import type { RunError, RunEvent, RunStatus } from './types.js';

const TERMINAL: Record<string, RunStatus> = {
  'run.completed': 'completed',
  'run.failed': 'failed',
  'run.cancelled': 'cancelled',
};

/** The run's lifecycle status as its log says it stood after `events` (before any `waiting-*` refinement). */
function lifecycleOf(events: readonly RunEvent[]): RunStatus {
  let status: RunStatus = 'pending';
  for (const e of events) {
    if (e.type === 'run.started' || e.type === 'run.resumed' || e.type === 'run.resuming') status = 'running';
    else if (e.type === 'run.paused') status = 'paused';
    else if (TERMINAL[e.type]) return TERMINAL[e.type]!;
  }
  return status;
}

/**
 * The run as it stood right after the last of `events` (a prefix of its log), folded from the log alone: status,
 * variables, start and end times and error are the log's, not the run row's current ones. The `state.snapshot` of
 * the v2 `values` stream mode (events.md §The events channel). Child runs are not listed (their point-in-time
 * status is not in this log).
 */
export function snapshotAt(run: StoredRun, events: readonly RunEvent[]): RunSnapshot {
  let variables: Record<string, unknown>;
  try {
    variables = initialVariables(run.definition, run.inputs);
  } catch {
    variables = {};
  }
  const row: StoredRun = {
    ...run,
    status: lifecycleOf(events),
    variables,
    startedAt: null,
    completedAt: null,
    error: null,
  };
  // The row's start and end fields are written once, with the event that sets them: shown from the point on
  // where the log has that event.
  for (const e of events) {
    if (e.type === 'variable.changed') variables[e.payload.name as string] = e.payload.next;
    else if (e.type === 'run.started') row.startedAt = run.startedAt ?? e.timestamp;
    else if (TERMINAL[e.type]) {
      row.completedAt = run.completedAt ?? e.timestamp;
      row.error = run.error ?? (e.payload.error as RunError | undefined) ?? null;
    }
  }
  const snap = buildSnapshot(row, events);
  const waiting = snap.pendingInterrupts[0];
  if (snap.status === 'running' && waiting) snap.status = waitingStatusOfKind(waiting.kind);
  return snap;
}
