import { ErrorCode, HostError } from '../core/index.js';
import type { NodeRegistry } from './node-registry.js';
import type { RunEventInput, RunStatus, WorkflowNode } from './types.js';
import { TERMINAL_STATUSES } from './types.js';

/**
 * How a pause treats the executing nodes (v2 runs.md §Pause and resume): `drain-current-node` lets them reach a
 * terminal; `immediate` cuts each attempt (no terminal node event; the resume begins a fresh attempt). Either way no
 * node starts while paused.
 */
export const DRAIN_POLICIES = ['drain-current-node', 'immediate'] as const;
export type DrainPolicy = (typeof DRAIN_POLICIES)[number];

/** A refused pause or resume: `run_terminal` on a terminal run, else a conflict naming the refusing status. */
function refusal(status: RunStatus, what: string): HostError {
  return TERMINAL_STATUSES.has(status)
    ? new HostError(ErrorCode.RUN_TERMINAL, `the run is already ${status}`, { runStatus: status })
    : new HostError(ErrorCode.CONFLICT, `a ${status} run cannot be ${what}`, { status });
}

/** An attempt an `immediate` pause cuts: the node and the ordinal of its `node.started` in the log. */
export interface CutAttempt {
  nodeId: string;
  attempt: number;
}

/**
 * The `run.paused` event of an accepted pause, or the refusal (already paused, cancelling, terminal). An `immediate`
 * pause names the attempts it cuts: `interruptedNodeId`/`interruptedAttempt` (runs.md) for the first, and every cut
 * node in `interruptedNodeIds`, which a fold after a restart reads so a cut attempt is begun afresh, never resumed.
 */
export function pauseEvent(
  status: RunStatus,
  ending: boolean,
  o: { reason?: string; drainPolicy: DrainPolicy },
  cut: readonly CutAttempt[] = [],
): RunEventInput {
  if (status === 'paused' || status === 'cancelling' || ending || TERMINAL_STATUSES.has(status))
    throw refusal(status, 'paused');
  const first = cut[0];
  return {
    type: 'run.paused',
    payload: {
      drainPolicy: o.drainPolicy,
      ...(o.reason ? { reason: o.reason } : {}),
      ...(first
        ? {
            interruptedNodeId: first.nodeId,
            interruptedAttempt: first.attempt,
            interruptedNodeIds: cut.map((c) => c.nodeId),
          }
        : {}),
    },
  };
}

/**
 * An `immediate` pause refused because an in-flight attempt cannot be cut: only a pure node (no external effect, not
 * pinned to an agent) is cut; an MHS command in flight is reconciled, never abandoned or resent (HOST-081/091), and an
 * MCP, model or child-run call already sent cannot be taken back. `drain-current-node` pauses such a run.
 */
export function uncuttable(status: RunStatus, nodeId: string, typeId: string): HostError {
  return new HostError(
    ErrorCode.CONFLICT,
    `node ${nodeId} (${typeId}) is executing an attempt with an external effect, which an immediate pause cannot cut; pause with drain-current-node`,
    { status, nodeId, typeId, supported: ['drain-current-node'] },
  );
}

/**
 * The attempts an `immediate` pause cuts: every node in flight, each of which must be a pure node (core nodes: no host
 * service, no external effect) not run by an agent, else the pause is refused ({@link uncuttable}).
 */
export function cutAttempts(
  status: RunStatus,
  inFlight: Iterable<string>,
  nodeOf: (nodeId: string) => WorkflowNode,
  registry: NodeRegistry,
  activation: (nodeId: string) => number,
): CutAttempt[] {
  const cut: CutAttempt[] = [];
  for (const nodeId of inFlight) {
    const node = nodeOf(nodeId);
    if (!(registry.has(node.typeId) && registry.get(node.typeId).pure === true && node.agent === undefined))
      throw uncuttable(status, nodeId, node.typeId);
    cut.push({ nodeId, attempt: activation(nodeId) });
  }
  return cut;
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
