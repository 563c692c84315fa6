/**
 * The agent loop: feeds the generated tool surface (HOST-030) to a model provider, dispatches its tool calls
 * through the governed path (HOST-020, 033) and stops on a final message or after `maxTurns` turns. Each run is
 * one session scope (HOST-034: its sessions are closed when it ends) and one trace; the transcript holds the
 * disclosure shown to the model, every call and result, and the final message (HOST-054).
 */
import { RealClock, createIdFactory, toHostError } from '../core/index.js';
import type { Clock, IdFactory } from '../core/index.js';
import type { Engine } from '../engine/engine.js';
import { dispatchToolCall } from '../engine/tool-dispatch.js';
import type { DispatchedCall, ToolDispatchDeps } from '../engine/tool-dispatch.js';
import { ToolSurfaceBuilder, toolSpecs } from '../engine/tool-surface.js';
import { EngineTracer } from '../engine/tracing.js';
import type { DisclosureRequest } from '../engine/session-disclosure.js';
import { InputSchemaCache } from '../engine/schema-cache.js';
import { presentEndpoint, renderEndpointText } from '../mhs/presentation.js';
import type { ModelMessage, ModelProvider, ModelUsage, ProviderToolCall } from './model-provider.js';

/** Progress of a run, for printing. */
export type AgentEvent =
  | { type: 'turn'; index: number; tools: number }
  /** What the model answered on turn `index` (its text, if any, and the token counts it reported). */
  | { type: 'reply'; index: number; kind: 'tool_calls' | 'final'; calls: number; text?: string; usage?: ModelUsage }
  | { type: 'tool_call'; call: ProviderToolCall }
  | { type: 'tool_result'; result: DispatchedCall }
  | { type: 'final'; text: string };

/** Options of {@link runAgent}. */
export interface AgentOptions {
  provider: ModelProvider;
  engine: ToolDispatchDeps['engine'] & Pick<Engine, 'endpoint'>;
  ledger: ToolDispatchDeps['ledger'];
  transcript?: ToolDispatchDeps['transcript'];
  /** The user message the run starts with. */
  prompt?: string;
  /** Most model turns; default 20. */
  maxTurns?: number;
  clock?: Clock;
  ids?: IdFactory;
  /** Reuse a builder to keep its per-digest cache across runs. */
  surfaces?: ToolSurfaceBuilder;
  tracer?: EngineTracer;
  onEvent?: (e: AgentEvent) => void;
  signal?: AbortSignal;
  /** The surface that shows each session's disclosure before its first capability call (HOST-003). */
  disclosure?: DisclosureRequest;
}

/** How a run ended. */
export interface AgentResult {
  runId: string;
  stopReason: 'final' | 'max_turns' | 'aborted';
  /** The final message, when the model gave one. */
  final: string | null;
  turns: number;
  calls: DispatchedCall[];
  traceparent: string;
  /** Token counts summed over the turns whose provider reported them; unset when none did. */
  usage?: ModelUsage;
}

/** The disclosure the model is shown first: every attached endpoint rendered from its manifest (HOST-013). */
export async function disclosureText(engine: Pick<Engine, 'handles'>): Promise<string> {
  return (await engine.handles()).map((e) => renderEndpointText(presentEndpoint(e.manifest))).join('\n\n');
}

/**
 * The `provider.usage` ledger entry of one metered turn: the provider's own counts and the request's LLM cache key
 * (`cache_key`, replay.md §"LLM cache-key recipe": a digest, no prompt or answer text), the ledger counterpart of
 * OpenWOP `provider.usage` (RFC 0026).
 */
function usageEntry(
  runId: string,
  turn: number,
  meter: { provider: string; model: string },
  u: ModelUsage,
  trace: { traceparent: string },
  cacheKey: string | undefined,
) {
  return {
    kind: 'provider.usage' as const,
    agent_run_id: runId,
    turn,
    provider: meter.provider,
    model: meter.model,
    input_tokens: u.inputTokens,
    output_tokens: u.outputTokens,
    total_tokens: u.inputTokens + u.outputTokens,
    ...(cacheKey ? { cache_key: cacheKey } : {}),
    traceparent: trace.traceparent,
  };
}

/**
 * Runs the agent until it gives a final message, `maxTurns` model turns have passed, or `signal` aborts.
 * Refused or failed tool calls go back to the model as results; a provider error or a ledger failure ends the
 * run by throwing (its sessions are closed first).
 */
export async function runAgent(o: AgentOptions): Promise<AgentResult> {
  const ids = o.ids ?? createIdFactory(o.clock ?? new RealClock());
  const tracer = o.tracer ?? new EngineTracer();
  const surfaces = o.surfaces ?? new ToolSurfaceBuilder();
  const deps: ToolDispatchDeps = {
    engine: o.engine,
    ledger: o.ledger,
    tracer,
    schemas: new InputSchemaCache(),
    ...(o.transcript ? { transcript: o.transcript } : {}),
  };
  const runId = ids.next('run');
  const trace = tracer.start(`mhs.agent ${o.provider.name}`, undefined, { 'mhs.agent_run_id': runId });
  const parent = { traceparent: trace.traceparent };
  const say = async (role: string, text: string, extra: Record<string, unknown> = {}) => {
    if (o.transcript) await o.transcript.appendTranscript({ kind: 'message', session_id: runId, role, text, ...extra });
  };
  const messages: ModelMessage[] = [{ role: 'system', content: await disclosureText(o.engine) }];
  const calls: DispatchedCall[] = [];
  /** Endpoints this run called: their session scope is closed at its end (HOST-034). */
  const touched = new Set<string>();
  const maxTurns = o.maxTurns ?? 20;
  let turns = 0;
  let usage: ModelUsage | undefined;
  let error: string | undefined;
  const end = (stopReason: AgentResult['stopReason'], final: string | null): AgentResult => ({
    runId,
    stopReason,
    final,
    turns,
    calls,
    traceparent: trace.traceparent,
    ...(usage ? { usage } : {}),
  });
  try {
    await say('system', (messages[0] as { content: string }).content, { provider: o.provider.name });
    if (o.prompt !== undefined) {
      messages.push({ role: 'user', content: o.prompt });
      await say('user', o.prompt);
    }
    while (turns < maxTurns) {
      if (o.signal?.aborted) return end('aborted', null);
      // Regenerated when a manifest digest changed; endpoints other processes attach are reached through them.
      const surface = surfaces.build(await o.engine.handles());
      o.onEvent?.({ type: 'turn', index: turns, tools: surface.tools.length });
      let reply;
      try {
        reply = await o.provider.next({
          messages,
          tools: toolSpecs(surface),
          ...(o.signal ? { signal: o.signal } : {}),
        });
      } catch (err) {
        // A provider cancelled by the run's signal ends the run as aborted, not as a failure.
        if (o.signal?.aborted) return end('aborted', null);
        throw err;
      }
      if (reply.usage) {
        usage = {
          inputTokens: (usage?.inputTokens ?? 0) + reply.usage.inputTokens,
          outputTokens: (usage?.outputTokens ?? 0) + reply.usage.outputTokens,
        };
        if (o.provider.meter)
          await o.ledger.append(usageEntry(runId, turns, o.provider.meter, reply.usage, parent, reply.cacheKey));
      }
      o.onEvent?.({
        type: 'reply',
        index: turns,
        kind: reply.kind,
        calls: reply.kind === 'tool_calls' ? reply.calls.length : 0,
        ...(reply.text ? { text: reply.text } : {}),
        ...(reply.usage ? { usage: reply.usage } : {}),
      });
      turns++;
      if (reply.kind === 'final') {
        await say('assistant', reply.text);
        o.onEvent?.({ type: 'final', text: reply.text });
        return end('final', reply.text);
      }
      messages.push({ role: 'assistant', content: reply.text ?? null, toolCalls: reply.calls });
      if (reply.text !== undefined) await say('assistant', reply.text);
      for (const call of reply.calls) {
        o.onEvent?.({ type: 'tool_call', call });
        const r = await dispatchToolCall(deps, surface, call, {
          agentRunId: runId,
          trace: parent,
          // HOST-035: model calls are made for an agent principal, named by the host, never by the model.
          principal: {
            kind: 'agent',
            id: runId,
            name: o.provider.meter ? `${o.provider.meter.provider}:${o.provider.meter.model}` : o.provider.name,
          },
          ...(o.signal ? { signal: o.signal } : {}),
          ...(o.disclosure ? { disclosure: o.disclosure } : {}),
        });
        calls.push(r);
        const target = surface.get(call.name)?.target;
        if (target) touched.add(target.endpointId);
        o.onEvent?.({ type: 'tool_result', result: r });
        messages.push({ role: 'tool', toolCallId: call.id, name: call.name, isError: r.isError, content: r.result });
      }
    }
    return end('max_turns', null);
  } catch (err) {
    error = toHostError(err).code;
    throw err;
  } finally {
    // HOST-034: the run's sessions end with it.
    // An endpoint another process attaches is asked only when this run called it (each close is a round trip).
    const eps = (await o.engine.handles().catch(() => [])).filter(
      (ep) => o.engine.endpoint(ep.endpointId) || touched.has(ep.endpointId),
    );
    await Promise.all(eps.map((ep) => ep.closeSessionScope(runId).catch(() => undefined)));
    tracer.end(trace, error);
  }
}
