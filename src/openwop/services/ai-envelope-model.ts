import type { ModelUsage, UsageMeter } from './provider-usage.js';

/**
 * The model behind `ctx.aiEnvelope`. Structurally the `ModelProvider` of `src/ai` (which this layer may not import):
 * the CLI passes the scripted provider, tests a counting model. Only text turns are used (no tools).
 */
export type EnvelopeModelMessage =
  | { role: 'system' | 'user'; content: string }
  /** `toolCalls` is always empty here; present so the conversation is a valid `ModelMessage[]`. */
  | { role: 'assistant'; content: string | null; toolCalls: [] };

/** A model provider as `ctx.aiEnvelope` uses it. Throws on failure (mapped to `provider_unavailable`). */
export interface EnvelopeModel {
  readonly name: string;
  /** Set when the model stands for an LLM provider: each call emits `provider.usage` (RFC 0026). */
  readonly meter?: UsageMeter;
  next(req: {
    messages: readonly EnvelopeModelMessage[];
    tools: readonly never[];
    signal?: AbortSignal;
  }): Promise<
    | { kind: 'final'; text: string; usage?: ModelUsage }
    | { kind: 'tool_calls'; calls: unknown[]; text?: string; usage?: ModelUsage }
  >;
}
