import { initialTransition, transition } from 'xstate';
import { supervisorTurnMachine } from '../../../machines/supervisor-loop.js';
import type { TurnEnd, TurnEvent } from '../../../machines/supervisor-loop.js';
import { NodeFailure } from '../node-registry.js';
import type { NodeContext, NodeResult } from '../node-registry.js';
import { dispatchMappings, dispatchWorkers } from './dispatch-workers.js';
import type { WorkerOutcome } from './dispatch-workers.js';
import { emitOnce } from './emit-once.js';

/** An `OrchestratorDecision` (orchestrator-decision.schema.json). */
export type OrchestratorDecision =
  | { kind: 'next-worker'; nextWorkerIds: string[]; confidence?: number }
  | { kind: 'ask-user'; prompt: string }
  | { kind: 'terminate'; reason?: string; confidence?: number };

/** What one dispatch turn acts on and with. */
export interface DispatchTurn {
  decision: OrchestratorDecision;
  /** The `runOrchestrator.decided` event of the decision (causation of the first handoff record). */
  decidedEventId?: string;
  confidenceFloor: number;
  hostId: string;
}

async function clarify(ctx: NodeContext, question: string, info: Record<string, unknown>): Promise<unknown> {
  const outcome = await ctx.interrupt({
    kind: 'clarification',
    data: { questions: [{ id: 'answer', question }] },
    suspendInfo: info,
  });
  if (outcome.timedOut) throw new NodeFailure('interrupt_timeout', 'the clarification timed out');
  return outcome.resumeValue.resumeValue ?? outcome.resumeValue;
}

/** RFC 0039 §A: records `core.workflowChain.confidence-escalated`, then asks; false when the answer drops it. */
async function escalate(ctx: NodeContext, t: DispatchTurn): Promise<boolean> {
  const d = t.decision as { kind: string; confidence: number; nextWorkerIds?: string[] };
  const workerId = d.nextWorkerIds?.[0];
  await emitOnce(ctx, {
    type: 'core.workflowChain.confidence-escalated',
    ...(t.decidedEventId ? { causationId: t.decidedEventId } : {}),
    payload: {
      confidence: d.confidence,
      floor: t.confidenceFloor,
      escalationKind: 'clarify',
      ...(workerId ? { workerId } : {}),
      parentRunId: ctx.runId,
      originalDecision: t.decision,
    },
  });
  const answer = await clarify(ctx, `Confirm the ${d.kind} decision (confidence ${d.confidence})?`, {
    reason: 'low-confidence',
    observed: d.confidence,
    floor: t.confidenceFloor,
  });
  return !(answer === false || (answer as { confirm?: unknown } | null)?.confirm === false);
}

/**
 * One dispatch turn (RFC 0007, RFC 0037 loop step 2): the supervisor-turn machine decides the route of the
 * decision and this runs its effects: escalation (confidence-escalated, then a clarification; nothing is
 * dispatched before the answer, and `{confirm: false}` drops the decision), ask-user (a clarification),
 * next-worker (each worker as a child run through its handoff machine) or refusal (`fan_out_unsupported`).
 * `terminate` ends the loop (`exitLoop`), so the run completes.
 */
export async function runDispatchTurn(ctx: NodeContext, t: DispatchTurn): Promise<NodeResult> {
  const c = ctx.node.config;
  const decision = t.decision;
  let [snap, actions] = initialTransition(supervisorTurnMachine, {
    decision,
    floor: t.confidenceFloor,
    fanOutPolicy: c.fanOutPolicy === 'reject' ? 'reject' : 'sequential',
  });
  let answer: unknown;
  let dispatched: { outcomes: WorkerOutcome[]; variables: Record<string, unknown> } | undefined;
  for (;;) {
    let next: TurnEvent | undefined;
    for (const a of actions) {
      if (a.type === 'escalate') {
        next = (await escalate(ctx, t)) ? { type: 'escalation.confirmed' } : { type: 'escalation.dropped' };
      } else if (a.type === 'ask') {
        answer = await clarify(ctx, (decision as { prompt: string }).prompt, { reason: 'ask-user' });
        next = { type: 'answered' };
      } else if (a.type === 'refuse') {
        throw new NodeFailure('fan_out_unsupported', 'this dispatch node does not fan out to several workers', {
          nextWorkerIds: (decision as { nextWorkerIds: string[] }).nextWorkerIds,
        });
      } else if (a.type === 'dispatch') {
        dispatched = await dispatchWorkers(ctx, {
          workers: (decision as { nextWorkerIds: string[] }).nextWorkerIds,
          ...(t.decidedEventId ? { decidedEventId: t.decidedEventId } : {}),
          mappings: dispatchMappings(c),
          hostId: t.hostId,
        });
        next = { type: 'workers.settled' };
      }
    }
    if (snap.status === 'done' || !next) break;
    [snap, actions] = transition(supervisorTurnMachine, snap, next);
  }
  const end = snap.value as TurnEnd;
  if (end === 'terminated') return { outputs: { decision, terminated: true }, exitLoop: true };
  if (end === 'dropped') return { outputs: { decision, escalated: true, confirmed: false } };
  if (end === 'answered') return { outputs: { decision, answer } };
  const { outcomes, variables } = dispatched!;
  const last = outcomes.at(-1)!;
  return {
    outputs: {
      decision,
      ...(last.childRunId ? { childRunId: last.childRunId } : {}),
      childStatus: last.childStatus,
      workers: outcomes,
    },
    variables,
  };
}
