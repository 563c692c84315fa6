import { ErrorCode, HostError } from '../core/index.js';
import type { RunEventInput, RunStatus } from './types.js';
import { TERMINAL_STATUSES } from './types.js';

/**
 * How a pause treats the executing node (v2 runs.md §Pause and resume). Only `drain-current-node` is served: the
 * executing nodes reach a terminal, no new node starts. `immediate` (cut the attempt, restart it on resume) is refused.
 */
export const DRAIN_POLICIES = ['drain-current-node'] as const;
export type DrainPolicy = (typeof DRAIN_POLICIES)[number];

/** A refused pause or resume: `run_terminal` on a terminal run, else a conflict naming the refusing status. */
function refusal(status: RunStatus, what: string): HostError {
  return TERMINAL_STATUSES.has(status)
    ? new HostError(ErrorCode.RUN_TERMINAL, `the run is already ${status}`, { runStatus: status })
    : new HostError(ErrorCode.CONFLICT, `a ${status} run cannot be ${what}`, { status });
}

/** The `run.paused` event of an accepted pause, or the refusal (already paused, cancelling, terminal). */
export function pauseEvent(
  status: RunStatus,
  ending: boolean,
  o: { reason?: string; drainPolicy: DrainPolicy },
): RunEventInput {
  if (status === 'paused' || status === 'cancelling' || ending || TERMINAL_STATUSES.has(status))
    throw refusal(status, 'paused');
  return { type: 'run.paused', payload: { drainPolicy: o.drainPolicy, ...(o.reason ? { reason: o.reason } : {}) } };
}

/** The `run.resumed` event of an accepted resume, or the refusal (the run is not paused). */
export function resumeEvent(status: RunStatus, reason: string | undefined): RunEventInput {
  if (status !== 'paused') throw refusal(status, 'resumed');
  return { type: 'run.resumed', payload: reason ? { reason } : {} };
}

/**
 * The status a write may set while the run is paused: `paused` stays until a resume or a cancel (the only exits); a
 * drained node's interrupt does not turn it into `waiting-*`. Terminal and `cancelling` patches pass.
 */
export function heldStatus(paused: boolean, next: RunStatus): RunStatus {
  return paused && !TERMINAL_STATUSES.has(next) && next !== 'cancelling' ? 'paused' : next;
}
