import { resolveAgentId, runAgentScript, scriptFromConfig } from '../agents/agent-script.js';
import { belowThreshold, escalationThreshold, lowConfidenceGate, SPEC_CONFIDENCE_FLOOR } from '../agents/confidence.js';
import { runDispatchTurn } from '../agents/dispatch-turn.js';
import type { OrchestratorDecision } from '../agents/dispatch-turn.js';
import { emitOnce } from '../agents/emit-once.js';
import { modelDecision, workersOf } from '../agents/model-decision.js';
import type { EnvelopeModel } from '../services/ai-envelope-model.js';
import { namedModel } from '../services/named-model.js';
import { NodeFailure } from '../node-registry.js';
import { loopLimitOf } from '../run-options.js';
import type { NodeContext, NodeModule, NodeResult } from '../node-registry.js';
import { openwopSchemas, schemaId } from '../schemas.js';
import type { WorkflowNode } from '../types.js';

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

/** The worker the scripted default supervisor dispatches when its config names none (the conformance child). */
const DEFAULT_WORKER = 'conformance-noop';

/**
 * The scripted default of a supervisor with neither a mock plan nor a host model: one `next-worker` turn (its first
 * configured worker, else `conformance-noop`), then `terminate` (fixtures.md `conformance-dispatch-loop`:
 * supervisor → worker → supervisor → terminate).
 */
function defaultDecision(c: Record<string, unknown>, activation: number): OrchestratorDecision {
  if (activation > 1) return { kind: 'terminate', reason: 'goal-reached' };
  return { kind: 'next-worker', nextWorkerIds: [workersOf(c)[0] ?? DEFAULT_WORKER] };
}

/** True when the config scripts the decisions (the conformance mock), so no model is asked. */
function hasMockPlan(c: Record<string, unknown>): boolean {
  return c.mockDispatchPlan !== undefined || c.mockDecisions !== undefined || c.mockPendingDecision !== undefined;
}

function validateSupervisor(node: WorkflowNode): Issue[] {
  const c = node.config;
  const issues: Issue[] = [];
  if (c.workers !== undefined && !(Array.isArray(c.workers) && c.workers.every((w) => typeof w === 'string' && w)))
    issues.push({ path: '/config/workers', message: 'must be an array of worker ids' });
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
 * RFC 0058 / v2 runs.md §"run section": the run's `maxLoopIterations` bounds its orchestrator turns (RFC 0061: the
 * count of `runOrchestrator.decided`, one per supervisor activation). The turn past it is not taken: no decision is
 * asked; `cap.breached {kind: 'loop-iterations'}` is recorded and the node fails `loop_limit_exceeded`.
 */
async function checkLoopLimit(ctx: NodeContext): Promise<void> {
  const limit = loopLimitOf(ctx.configurable);
  if (limit === undefined || ctx.activation <= limit) return;
  await emitOnce(ctx, {
    type: 'cap.breached',
    payload: { kind: 'loop-iterations', limit, observed: ctx.activation, nodeId: ctx.node.id },
  });
  throw new NodeFailure('loop_limit_exceeded', `more than ${limit} orchestrator turns (maxLoopIterations)`, { limit });
}

/**
 * One orchestrator turn (RFC 0006, RFC 0037 loop step 1): decides (recorded with `ctx.checkpoint`, so a
 * restarted host does not decide again), emits `agent.decided`, holds a decision whose confidence is below
 * the threshold behind the CP-1 approval (`node.suspended {reason: 'low-confidence'}`; no
 * `runOrchestrator.decided` until it is accepted), then emits `runOrchestrator.decided` exactly once.
 * Without a mock plan and with a host model, the model decides (see `model-decision.ts`) and its `confidence`
 * scores the decision; with neither, the scripted default decides (dispatch once, then terminate).
 */
async function runSupervisor(
  ctx: NodeContext,
  hostModel: EnvelopeModel | undefined,
  runModelOf: ((value: string) => EnvelopeModel) | undefined,
): Promise<NodeResult> {
  const c = ctx.node.config;
  const agentId = resolveAgentId(ctx.node, 'supervisor');
  await checkLoopLimit(ctx);
  const plan = supervisorPlan(c);
  const mocked = hasMockPlan(c);
  // A run's `configurable.model` overrides the host model (run-options.md §Reserved keys); a mock plan needs neither.
  const runModel = typeof ctx.configurable?.model === 'string' ? ctx.configurable.model : undefined;
  const model =
    !mocked && runModel !== undefined && runModelOf
      ? namedModel((_p, m) => runModelOf(m), 'configurable.model', runModel)
      : hostModel;
  const asked = model && !mocked ? await modelDecision(ctx, model) : undefined;
  const decision = await ctx.checkpoint<OrchestratorDecision>(
    'orchestrator:decision',
    () =>
      asked ??
      (mocked
        ? ((plan[ctx.activation - 1] as OrchestratorDecision | undefined) ?? {
            kind: 'terminate',
            reason: 'plan-exhausted',
          })
        : defaultDecision(c, ctx.activation)),
  );
  // mockConfidence scores the pending decision's tick when there is one, else every tick.
  const stated = (decision as { confidence?: unknown }).confidence;
  const confidence =
    typeof c.mockConfidence === 'number' && (c.mockPendingDecision === undefined || ctx.activation === 1)
      ? c.mockConfidence
      : asked && typeof stated === 'number'
        ? stated
        : undefined;
  const agentDecided = await emitOnce(ctx, {
    type: 'agent.decided',
    payload: { agentId, decision, ...(confidence !== undefined ? { confidence } : {}) },
  });
  let cause = agentDecided.eventId;
  const threshold = escalationThreshold(ctx);
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

/**
 * `core.orchestrator.supervisor`; `model` decides when a workflow gives no mock plan, or the model a run names with
 * `configurable.model` when `runModelOf` can build it.
 */
export function supervisorNode(model?: EnvelopeModel, runModelOf?: (value: string) => EnvelopeModel): NodeModule {
  return {
    typeId: 'core.orchestrator.supervisor',
    validate: validateSupervisor,
    execute: (ctx) => runSupervisor(ctx, model, runModelOf),
  };
}

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

/**
 * One dispatch turn on the decision of the supervisor before it (see {@link runDispatchTurn}), after the
 * dispatch-config `iterationCap` check.
 */
async function runDispatch(ctx: NodeContext, o: DispatchOptions): Promise<NodeResult> {
  const up = upstreamDecision(ctx);
  if (!up) throw new NodeFailure('dispatch_no_decision', 'no upstream OrchestratorDecision reached this dispatch node');
  const cap = ctx.node.config.iterationCap;
  if (typeof cap === 'number' && ctx.activation > cap) {
    // dispatch-config iterationCap; the payload kind enum names the agent-loop ceiling `loop-iterations`.
    await emitOnce(ctx, {
      type: 'cap.breached',
      payload: { kind: 'loop-iterations', limit: cap, observed: ctx.activation, nodeId: ctx.node.id },
    });
    throw new NodeFailure('cap_breached', `more than ${cap} dispatch iterations`, { limit: cap });
  }
  return runDispatchTurn(ctx, { ...up, confidenceFloor: o.confidenceFloor, hostId: o.hostId });
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

export type { OrchestratorDecision };
