import type { NodeContext } from '../node-registry.js';
import type { RunEvent, WorkflowNode } from '../types.js';
import { belowThreshold, escalationThreshold, lowConfidenceGate } from './confidence.js';
import { emitOnce } from './emit-once.js';

/** `AgentRef` (agent-ref.schema.json), as pinned on `nodes[].agent`. */
export interface AgentRef {
  agentId: string;
  name?: string;
  modelClass?: string;
  version?: string;
}

/** One scripted tool call (core-conformance-mock-agent-config.schema.json `mockToolCalls[]`). */
export interface ScriptedToolCall {
  toolId: string;
  arguments?: unknown;
  result?: unknown;
  error?: { error: string; message: string; details?: Record<string, unknown> };
  durationMs?: number;
}

/** What an agent emits, in the RFC 0023 §B order: reasoning → tool pairs → handoff → decision. */
export interface AgentScript {
  reasoning?: { summary?: string; reasoning: string; tokenCount?: number; chunks?: string[] };
  toolCalls: ScriptedToolCall[];
  handoff?: { toAgentId: string; reason?: string; context?: unknown };
  decision?: { decision: unknown; confidence?: number; reasoning?: string };
}

function obj(v: unknown): Record<string, unknown> | undefined {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/** The node's `agent` pin, when it has a valid one. */
export function agentRefOf(node: WorkflowNode): AgentRef | undefined {
  const a = obj(node.agent);
  return a && typeof a.agentId === 'string' && a.agentId.length >= 3 ? (a as unknown as AgentRef) : undefined;
}

/** The emitter's agentId: `config.agentId` → the node's `agent` pin → `host:<kind>:<nodeId>`. */
export function resolveAgentId(node: WorkflowNode, kind = 'agent'): string {
  const c = node.config.agentId;
  if (typeof c === 'string' && c.length >= 3) return c;
  return agentRefOf(node)?.agentId ?? `host:${kind}:${node.id}`;
}

/**
 * Reads the mock-agent keys of a node config (`mockReasoning`, `mockToolCalls`, `mockHandoff`, `mockDecision`,
 * `mockConfidence`; RFC 0024 `mockReasoning.streamChunks`). `emitReasoningTrace: true` (fixture
 * `conformance-agent-reasoning`) asks for the whole sequence with host stubs where the config names none.
 */
export function scriptFromConfig(config: Record<string, unknown>, agentId: string): AgentScript {
  const full = config.emitReasoningTrace === true;
  const s: AgentScript = { toolCalls: [] };
  const r = config.mockReasoning;
  const ro = obj(r);
  if (ro) {
    const chunks = Array.isArray(ro.streamChunks)
      ? ro.streamChunks.filter((x): x is string => typeof x === 'string')
      : [];
    const summary = typeof ro.summary === 'string' ? ro.summary : undefined;
    const text = chunks.length ? chunks.join('') : typeof ro.trace === 'string' ? ro.trace : (summary ?? '');
    s.reasoning = {
      reasoning: text,
      ...(summary !== undefined ? { summary } : {}),
      ...(typeof ro.tokenCount === 'number' ? { tokenCount: ro.tokenCount } : {}),
      ...(chunks.length ? { chunks } : {}),
    };
  } else if (r === true || full) {
    s.reasoning = { summary: 'stub reasoning', reasoning: `${agentId} considered the task and chose to proceed.` };
  }
  if (Array.isArray(config.mockToolCalls)) {
    for (const t of config.mockToolCalls) {
      const o = obj(t);
      if (o && typeof o.toolId === 'string') s.toolCalls.push(o as unknown as ScriptedToolCall);
    }
  } else if (full) {
    s.toolCalls.push({ toolId: 'host:lookup', arguments: { q: 'context' }, result: { hits: 1 }, durationMs: 0 });
  }
  const h = obj(config.mockHandoff);
  if (h && typeof h.toAgentId === 'string') s.handoff = h as unknown as AgentScript['handoff'];
  else if (full) s.handoff = { toAgentId: `${agentId}.worker`, reason: 'specialist routing' };
  const d = obj(config.mockDecision);
  if (d && 'decision' in d) s.decision = d as unknown as AgentScript['decision'];
  else if (typeof config.mockConfidence === 'number')
    s.decision = { decision: { kind: 'mock-decision' }, confidence: config.mockConfidence };
  else if (full) s.decision = { decision: { kind: 'proceed' }, confidence: 0.9 };
  return s;
}

/** What {@link runAgentScript} recorded. */
export interface AgentScriptResult {
  decided?: RunEvent;
  decision?: unknown;
  confidence?: number;
  /** Set when a low-confidence decision was ratified through the approval interrupt. */
  ratifiedBy?: string | null;
}

/**
 * Emits a script's `agent.*` events for one node activation (each once, so a resumed node does not repeat
 * them), then applies the confidence threshold: a decision below it suspends the node (CP-1) until it is
 * ratified (`accept`) or rejected (node fails `approval_rejected`). The decision is recorded with
 * `ctx.checkpoint`, so a restarted host reuses it instead of deciding again.
 */
export async function runAgentScript(
  ctx: NodeContext,
  agentId: string,
  script: AgentScript,
  o: { streaming: boolean },
): Promise<AgentScriptResult> {
  const base = `${ctx.runId}:${ctx.node.id}:${ctx.activation}`;
  let last: RunEvent | undefined;
  const cause = (): { causationId?: string } => (last ? { causationId: last.eventId } : {});
  if (script.reasoning) {
    const r = script.reasoning;
    if (o.streaming) {
      for (const [i, delta] of (r.chunks ?? []).entries()) {
        last = await emitOnce(
          ctx,
          { type: 'agent.reasoning.delta', ...cause(), payload: { agentId, delta, sequence: i, verbosity: 'full' } },
          (e) => e.payload.sequence === i,
        );
      }
    }
    last = await emitOnce(ctx, {
      type: 'agent.reasoned',
      ...cause(),
      payload: {
        agentId,
        reasoning: r.reasoning,
        verbosity: 'full',
        ...(r.summary !== undefined ? { summary: r.summary } : {}),
        ...(r.tokenCount !== undefined ? { tokenCount: r.tokenCount } : {}),
      },
    });
  }
  for (const [i, t] of script.toolCalls.entries()) {
    const callId = `${base}:call:${i}`;
    const called = await emitOnce(
      ctx,
      {
        type: 'agent.toolCalled',
        ...cause(),
        payload: {
          agentId,
          toolName: t.toolId,
          toolId: t.toolId,
          callId,
          inputs: t.arguments ?? {},
          arguments: t.arguments ?? {},
        },
      },
      (e) => e.payload.callId === callId,
    );
    const err = t.error ? { code: t.error.error, message: t.error.message } : undefined;
    last = await emitOnce(
      ctx,
      {
        type: 'agent.toolReturned',
        causationId: called.eventId,
        payload: {
          agentId,
          toolName: t.toolId,
          toolId: t.toolId,
          callId,
          ...(err ? { error: err, status: 'error' } : { outcome: t.result ?? null, result: t.result ?? null }),
          ...(t.durationMs !== undefined ? { durationMs: t.durationMs } : {}),
        },
      },
      (e) => e.payload.callId === callId,
    );
  }
  if (script.handoff) {
    const h = script.handoff;
    last = await emitOnce(ctx, {
      type: 'agent.handoff',
      ...cause(),
      payload: {
        fromAgentId: agentId,
        toAgentId: h.toAgentId,
        // RFC 0023 §B names the AgentRef forms too: `from` is the node's pin (or the emitter), `to` the target.
        from: agentRefOf(ctx.node) ?? { agentId },
        to: { agentId: h.toAgentId },
        ...(h.reason !== undefined ? { reason: h.reason } : {}),
        ...(h.context !== undefined ? { context: h.context } : {}),
      },
    });
  }
  if (!script.decision) return {};
  const d = await ctx.checkpoint('agent:decision', () => script.decision!);
  const decided = await emitOnce(ctx, {
    type: 'agent.decided',
    ...cause(),
    payload: {
      agentId,
      decision: d.decision ?? null,
      ...(d.confidence !== undefined ? { confidence: d.confidence } : {}),
      ...(d.reasoning !== undefined ? { reasoning: d.reasoning } : {}),
    },
  });
  const out: AgentScriptResult = { decided, decision: d.decision };
  if (d.confidence !== undefined) out.confidence = d.confidence;
  const threshold = escalationThreshold(ctx);
  if (belowThreshold(d.confidence, threshold)) {
    const r = await lowConfidenceGate(ctx, { agentId, observed: d.confidence!, threshold, decision: d.decision });
    out.ratifiedBy = r.decidedBy;
  }
  return out;
}
