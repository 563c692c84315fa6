/**
 * `provider.usage` (RFC 0026 §B; run-event-payloads.schema.json `$defs.providerUsage`): one durable run event per LLM
 * provider invocation, carrying token counts and never a prompt or answer substring (SR-1). It is appended in the same
 * batch as the checkpoint that records the model's answer, so the answer and its usage are in the log together or not
 * at all: a resumed node that reads the recorded answer, and a replay fork that resolves the node from the source's
 * recorded outcome, call no model and emit no second event.
 */
import { jcs } from '../../core/index.js';
import type { NodeContext } from '../node-registry.js';
import type { RunEvent, RunEventInput } from '../types.js';
import { mockOf } from './mock-providers.js';

/** Token counts of one model call, as a provider reports them (a scripted turn may declare them). */
export interface ModelUsage {
  inputTokens: number;
  outputTokens: number;
}

/**
 * The ids a model's calls are metered under. Set by a model that stands for an LLM provider (the scripted provider);
 * a stand-in that is no model (the echo default of manifest agents) leaves it unset and its calls emit no event.
 */
export interface UsageMeter {
  /** Canonical provider id (lowercase ASCII), e.g. `scripted`. */
  provider: string;
  /** The model id stamped on the event. */
  model: string;
}

/** What a metered call site knows about its model. */
export interface MeteredModel {
  readonly meter?: UsageMeter;
}

/** What the model was sent (structurally `ModelRequest` of src/ai; messages and tool specs only). */
export interface MeteredRequest {
  messages: ReadonlyArray<{ role: string; content?: unknown; toolCalls?: unknown }>;
  tools: readonly unknown[];
}

/** What the model answered (structurally `ModelTurn` of src/ai). */
export interface MeteredReply {
  text?: string | null;
  calls?: unknown;
  usage?: ModelUsage;
  /** The LLM cache key of the request (src/ai/llm-cache-key.ts), when the model computes one. */
  cacheKey?: string;
}

/** `capabilities.providerUsage` (capabilities.schema.json): advertised only by a family whose model is metered. */
export function providerUsageCapability(model: MeteredModel): Record<string, unknown> {
  // No rate table is configured, so no cost is ever estimated (costEstimateUsd is never emitted).
  return model.meter ? { providerUsage: { supported: true, costEstimates: false } } : {};
}

/** The documented counting rule when a model reports no usage: one token per 4 UTF-8 bytes, rounded up. */
export function estimateTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text, 'utf8') / 4);
}

function part(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && v.length === 0) return '';
  return jcs(v);
}

/**
 * The usage of one call: the reply's own counts verbatim when it reports them, else {@link estimateTokens} of the
 * prompt (every message's text, structured content and tool calls as canonical JSON, and every offered tool spec as
 * canonical JSON, joined with newlines) and of the answer (its text, then its tool calls as canonical JSON).
 */
export function usageOf(req: MeteredRequest, reply: MeteredReply): ModelUsage {
  if (reply.usage) return { inputTokens: reply.usage.inputTokens, outputTokens: reply.usage.outputTokens };
  const prompt = [
    ...req.messages.map((m) => [part(m.content), part(m.toolCalls)].filter(Boolean).join('\n')),
    ...req.tools.map(part),
  ].join('\n');
  const answer = [part(reply.text), part(reply.calls)].filter(Boolean).join('\n');
  return { inputTokens: estimateTokens(prompt), outputTokens: estimateTokens(answer) };
}

/** The trace id of a W3C traceparent (`00-<trace-id>-<span-id>-<flags>`), if well formed. */
function traceIdOf(traceparent: string | undefined): string | undefined {
  const id = traceparent?.split('-')[1];
  return id && /^[0-9a-f]{32}$/.test(id) ? id : undefined;
}

/**
 * The `provider.usage` event of one model call just made by `ctx`'s node, or none when the model is not metered.
 * Append it in the same `ctx.emit` batch as the answer's checkpoint ({@link checkpointEvent}).
 */
export function usageEvents(
  ctx: NodeContext,
  model: MeteredModel,
  req: MeteredRequest,
  reply: MeteredReply,
): RunEventInput[] {
  // Under a mock provider no provider was called: nothing to meter (run-options.md §"Mock provider extension").
  if (!model.meter || mockOf(ctx.configurable)) return [];
  const u = usageOf(req, reply);
  const traceId = traceIdOf(ctx.traceparent);
  return [
    {
      type: 'provider.usage',
      payload: {
        provider: model.meter.provider,
        model: model.meter.model,
        inputTokens: u.inputTokens,
        outputTokens: u.outputTokens,
        totalTokens: u.inputTokens + u.outputTokens,
        nodeId: ctx.node.id,
        ...(traceId ? { traceId } : {}),
      },
    },
  ];
}

/**
 * The `log.appended` event `ctx.checkpoint(name, ...)` appends (read back by `recallCheckpoint`). A recorded model
 * answer carries its request's LLM cache key (`fields.cacheKey`, replay.md §"LLM cache-key recipe"; RFC 0041 §A), so
 * a replay can match recorded answers by key.
 */
export function checkpointEvent(ctx: NodeContext, name: string, value: unknown, cacheKey?: string): RunEventInput {
  return {
    type: 'log.appended',
    payload: {
      level: 'debug',
      message: `checkpoint ${name}`,
      nodeId: ctx.node.id,
      fields: { checkpoint: name, value, ...(cacheKey ? { cacheKey } : {}) },
    },
  };
}

/** The token counts a `provider.usage` event (or its payload) carries. */
export function usageTokens(payload: Record<string, unknown>): ModelUsage {
  return { inputTokens: Number(payload.inputTokens) || 0, outputTokens: Number(payload.outputTokens) || 0 };
}

/** `a + b` field by field; `undefined` only when both are (no metered call). */
export function addUsage(a: ModelUsage | undefined, b: ModelUsage | undefined): ModelUsage | undefined {
  if (!a || !b) return a ?? b;
  return { inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens };
}

/**
 * The usage recorded with checkpoint `name` in a node's `history`: the `provider.usage` event appended in the same
 * batch, just before the checkpoint ({@link usageEvents} + {@link checkpointEvent}). `undefined` when the call was not
 * metered (or nothing is recorded under `name`). Lets a resumed node report a recorded call's usage without a new
 * event.
 */
export function recordedUsage(history: readonly RunEvent[], name: string): ModelUsage | undefined {
  const i = history.findIndex(
    (e) => e.type === 'log.appended' && (e.payload.fields as { checkpoint?: unknown } | undefined)?.checkpoint === name,
  );
  const prev = i > 0 ? history[i - 1] : undefined;
  return prev?.type === 'provider.usage' && prev.sequence === history[i]!.sequence - 1
    ? usageTokens(prev.payload)
    : undefined;
}

/** A model reply without its usage (what is recorded as the answer). */
export function withoutUsage<T extends MeteredReply>(reply: T): Omit<T, 'usage'> {
  const out: Partial<T> = { ...reply };
  delete out.usage;
  return out as Omit<T, 'usage'>;
}

/** The token rollup of {@link usageMetrics}, folded one event at a time. */
export class UsageFold {
  private input = 0;
  private output = 0;
  private last: Record<string, unknown> | undefined;

  apply(e: RunEvent): void {
    if (e.type !== 'provider.usage') return;
    this.input += Number(e.payload.inputTokens) || 0;
    this.output += Number(e.payload.outputTokens) || 0;
    this.last = e.payload;
  }

  value(): { metrics?: Record<string, unknown> } {
    if (!this.last) return {};
    return {
      metrics: {
        openwopCost: {
          tokens: { input: this.input, output: this.output },
          provider: String(this.last.provider),
          model: String(this.last.model),
        },
      },
    };
  }
}

/**
 * `RunSnapshot.metrics.openwopCost` (run-snapshot.schema.json) rolled up from the run's `provider.usage` events:
 * summed input/output tokens and the provider/model of the last call. No `usd` (no rate table) and no `duration_ms`
 * (the event carries none). Empty when the run made no metered call.
 */
export function usageMetrics(events: readonly RunEvent[]): { metrics?: Record<string, unknown> } {
  const f = new UsageFold();
  for (const e of events) f.apply(e);
  return f.value();
}
