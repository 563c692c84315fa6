import { resolveAgentId, runAgentScript, scriptFromConfig } from '../agents/agent-script.js';
import { belowThreshold, escalationThreshold, lowConfidenceGate, SPEC_CONFIDENCE_FLOOR } from '../agents/confidence.js';
import { dispatchMappings, dispatchWorkers } from '../agents/dispatch-workers.js';
import { emitOnce } from '../agents/emit-once.js';
import { NodeFailure } from '../node-registry.js';
import type { NodeContext, NodeModule, NodeResult } from '../node-registry.js';
import { openwopSchemas, schemaId } from '../schemas.js';
import type { WorkflowNode } from '../types.js';

/** An `OrchestratorDecision` (orchestrator-decision.schema.json). */
export type OrchestratorDecision =
  | { kind: 'next-worker'; nextWorkerIds: string[]; confidence?: number }
  | { kind: 'ask-user'; prompt: string }
  | { kind: 'terminate'; reason?: string; confidence?: number };

type Issue = { path: string; message: string };

function decisionIssues(d: unknown, path: string): Issue[] {
  return openwopSchemas()
    .check(schemaId('orchestrator-decision'), d)
    .map((i) => ({ path: `${path}${i.path === '/' ? '' : i.path}`, message: i.message }));
}

/**
 * The supervisor's scripted decisions (conformance hooks, spec node-packs.md): `mockPendingDecision` for the
 * first tick, then `mockDispatchPlan` (or `mockDecisions`), indexed by the turn; once exhausted, `terminate`.
 */
export function supervisorPlan(config: Record<string, unknown>): unknown[] {
  const plan = Array.isArray(config.mockDispatchPlan)
    ? config.mockDispatchPlan
    : Array.isArray(config.mockDecisions)
      ? config.mockDecisions
      : [];
  return config.mockPendingDecision !== undefined ? [config.mockPendingDecision, ...plan] : plan;
}

function validateSupervisor(node: WorkflowNode): Issue[] {
  const c = node.config;
  const issues: Issue[] = [];
  for (const key of ['mockDispatchPlan', 'mockDecisions'] as const) {
    if (c[key] === undefined) continue;
    if (!Array.isArray(c[key])) issues.push({ path: `/config/${key}`, message: 'must be an array of decisions' });
    else (c[key] as unknown[]).forEach((d, i) => issues.push(...decisionIssues(d, `/config/${key}/${i}`)));
  }
  if (c.mockPendingDecision !== undefined)
    issues.push(...decisionIssues(c.mockPendingDecision, '/config/mockPendingDecision'));
  if (
    c.mockConfidence !== undefined &&
    !(typeof c.mockConfidence === 'number' && c.mockConfidence >= 0 && c.mockConfidence <= 1)
  )
    issues.push({ path: '/config/mockConfidence', message: 'must be a number in [0, 1]' });
  return issues;
}

/**
 * One orchestrator turn (RFC 0006, RFC 0037 loop step 1): decides (recorded with `ctx.checkpoint`, so a
 * restarted host does not decide again), emits `agent.decided`, holds a decision whose confidence is below
 * the threshold behind the CP-1 approval (`node.suspended {reason: 'low-confidence'}`; no
 * `runOrchestrator.decided` until it is accepted), then emits `runOrchestrator.decided` exactly once.
 */
async function runSupervisor(ctx: NodeContext): Promise<NodeResult> {
  const c = ctx.node.config;
  const agentId = resolveAgentId(ctx.node, 'supervisor');
  const plan = supervisorPlan(c);
  const decision = await ctx.checkpoint<OrchestratorDecision>(
    'orchestrator:decision',
    () =>
      (plan[ctx.activation - 1] as OrchestratorDecision | undefined) ?? { kind: 'terminate', reason: 'plan-exhausted' },
  );
  // mockConfidence scores the pending decision's tick when there is one, else every tick.
  const confidence =
    typeof c.mockConfidence === 'number' && (c.mockPendingDecision === undefined || ctx.activation === 1)
      ? c.mockConfidence
      : undefined;
  const agentDecided = await emitOnce(ctx, {
    type: 'agent.decided',
    payload: { agentId, decision, ...(confidence !== undefined ? { confidence } : {}) },
  });
  let cause = agentDecided.eventId;
  const threshold = escalationThreshold(c);
  if (belowThreshold(confidence, threshold)) {
    cause = (await lowConfidenceGate(ctx, { agentId, observed: confidence!, threshold, decision })).causationId;
  }
  const decided = await emitOnce(ctx, {
    type: 'runOrchestrator.decided',
    causationId: cause,
    payload: { agentId, decision },
  });
  return { outputs: { decision, agentId, decidedEventId: decided.eventId } };
}

/** `core.orchestrator.supervisor`. */
export const supervisorNode: NodeModule = {
  typeId: 'core.orchestrator.supervisor',
  validate: validateSupervisor,
  execute: runSupervisor,
};

/** The decision wired into a dispatch node: the outputs of the supervisor that completed before it. */
function upstreamDecision(ctx: NodeContext): { decision: OrchestratorDecision; decidedEventId?: string } | undefined {
  for (const [id, out] of Object.entries(ctx.nodeOutputs ?? {})) {
    // A supervisor's outputs carry the decision with the id of its runOrchestrator.decided event.
    if (id === ctx.node.id || !out || typeof out.decidedEventId !== 'string') continue;
    if (typeof out.decision !== 'object' || out.decision === null) continue;
    return { decision: out.decision as OrchestratorDecision, decidedEventId: out.decidedEventId };
  }
  return undefined;
}

function validateDispatch(node: WorkflowNode): Issue[] {
  const c = node.config;
  const issues: Issue[] = [];
  if (c.askUserRouting !== undefined && c.askUserRouting !== 'auto' && c.askUserRouting !== 'clarification')
    issues.push({ path: '/config/askUserRouting', message: 'this host routes ask-user through clarification only' });
  if (c.workerDispatchModel !== undefined && c.workerDispatchModel !== 'child-run')
    issues.push({ path: '/config/workerDispatchModel', message: 'must be child-run' });
  if (c.fanOutPolicy !== undefined && c.fanOutPolicy !== 'sequential' && c.fanOutPolicy !== 'reject')
    issues.push({ path: '/config/fanOutPolicy', message: 'must be sequential or reject' });
  if (c.iterationCap !== undefined && !(Number.isInteger(c.iterationCap) && (c.iterationCap as number) >= 1))
    issues.push({ path: '/config/iterationCap', message: 'must be an integer >= 1' });
  return issues;
}

/** Options of the dispatch node. */
export interface DispatchOptions {
  /** This host's id, carried into child runs as the origin of their causation. */
  hostId: string;
  /** RFC 0039 §A floor of `OrchestratorDecision.confidence` (at least the spec floor 0.5). */
  confidenceFloor: number;
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

/**
 * One dispatch turn (RFC 0007, RFC 0037 loop step 2): acts on the upstream decision. `terminate` ends the loop
 * (the run completes); `ask-user` asks through a clarification interrupt; `next-worker` dispatches each worker
 * as a child run through the handoff machine. A decision below the confidence floor is escalated first
 * (`core.workflowChain.confidence-escalated`, then a clarification) and nothing is dispatched before the answer;
 * an answer `{confirm: false}` drops the decision and hands the turn back to the supervisor.
 */
async function runDispatch(ctx: NodeContext, o: DispatchOptions): Promise<NodeResult> {
  const up = upstreamDecision(ctx);
  if (!up) throw new NodeFailure('dispatch_no_decision', 'no upstream OrchestratorDecision reached this dispatch node');
  const { decision, decidedEventId } = up;
  const c = ctx.node.config;
  const cap = c.iterationCap;
  if (typeof cap === 'number' && ctx.activation > cap) {
    // dispatch-config iterationCap; the payload kind enum names the agent-loop ceiling `loop-iterations`.
    await emitOnce(ctx, {
      type: 'cap.breached',
      payload: { kind: 'loop-iterations', limit: cap, observed: ctx.activation, nodeId: ctx.node.id },
    });
    throw new NodeFailure('cap_breached', `more than ${cap} dispatch iterations`, { limit: cap });
  }
  const conf = decision.kind === 'ask-user' ? undefined : decision.confidence;
  if (belowThreshold(conf, o.confidenceFloor)) {
    const workerId = decision.kind === 'next-worker' ? decision.nextWorkerIds[0] : undefined;
    await emitOnce(ctx, {
      type: 'core.workflowChain.confidence-escalated',
      ...(decidedEventId ? { causationId: decidedEventId } : {}),
      payload: {
        confidence: conf!,
        floor: o.confidenceFloor,
        escalationKind: 'clarify',
        ...(workerId ? { workerId } : {}),
        parentRunId: ctx.runId,
        originalDecision: decision,
      },
    });
    const answer = await clarify(ctx, `Confirm the ${decision.kind} decision (confidence ${conf})?`, {
      reason: 'low-confidence',
      observed: conf,
      floor: o.confidenceFloor,
    });
    const confirmed = !(answer === false || (answer as { confirm?: unknown } | null)?.confirm === false);
    if (!confirmed) return { outputs: { decision, escalated: true, confirmed: false } };
  }
  if (decision.kind === 'terminate') return { outputs: { decision, terminated: true }, exitLoop: true };
  if (decision.kind === 'ask-user') {
    return { outputs: { decision, answer: await clarify(ctx, decision.prompt, { reason: 'ask-user' }) } };
  }
  if (c.fanOutPolicy === 'reject' && decision.nextWorkerIds.length > 1) {
    throw new NodeFailure('fan_out_unsupported', 'this dispatch node does not fan out to several workers', {
      nextWorkerIds: decision.nextWorkerIds,
    });
  }
  const { outcomes, variables } = await dispatchWorkers(ctx, {
    workers: decision.nextWorkerIds,
    ...(decidedEventId ? { decidedEventId } : {}),
    mappings: dispatchMappings(c),
    hostId: o.hostId,
  });
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

/** `core.dispatch`, bound to this host's id and confidence floor. */
export function dispatchNode(o: Partial<DispatchOptions> = {}): NodeModule {
  const opts: DispatchOptions = {
    hostId: o.hostId ?? 'mhs-host',
    confidenceFloor: Math.max(SPEC_CONFIDENCE_FLOOR, o.confidenceFloor ?? SPEC_CONFIDENCE_FLOOR),
  };
  return { typeId: 'core.dispatch', validate: validateDispatch, execute: (ctx) => runDispatch(ctx, opts) };
}

/**
 * `core.conformance.mock-agent` (RFC 0023): emits the scripted `agent.*` events of its config (with RFC 0024
 * `agent.reasoning.delta` chunks when streaming), then the CP-1 confidence gate.
 */
export function mockAgentNode(o: { streaming: boolean }): NodeModule {
  return {
    typeId: 'core.conformance.mock-agent',
    async execute(ctx) {
      const agentId = resolveAgentId(ctx.node, 'mock-agent');
      const r = await runAgentScript(ctx, agentId, scriptFromConfig(ctx.node.config, agentId), o);
      return { outputs: r.decision !== undefined ? { agentId, decision: r.decision } : { agentId } };
    },
  };
}
