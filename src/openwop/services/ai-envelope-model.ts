import type { ModelUsage, UsageMeter } from './provider-usage.js';

/**
 * The model behind `ctx.aiEnvelope` (and the supervisor's decisions). Structurally the `ModelProvider` of `src/ai`
 * (which this layer may not import): the CLI passes the scripted provider or a real one, tests a counting model.
 * Only text turns are used (no tools).
 */
export type EnvelopeModelMessage =
  | { role: 'system' | 'user'; content: string }
  /** `toolCalls` is always empty here; present so the conversation is a valid `ModelMessage[]`. */
  | { role: 'assistant'; content: string | null; toolCalls: [] };

/** Why an answer ended (`ModelFinish` of src/ai): absent is `stop`. */
export type EnvelopeFinish = 'stop' | 'length' | 'refusal';

/** Structured output asked of the model (`OutputFormat` of src/ai). */
export interface EnvelopeOutputFormat {
  name: string;
  schema: object;
}

/** A model provider as `ctx.aiEnvelope` uses it. Throws on failure (mapped to `provider_unavailable`). */
export interface EnvelopeModel {
  readonly name: string;
  /** Set when the model stands for an LLM provider: each call emits `provider.usage` (RFC 0026). */
  readonly meter?: UsageMeter;
  next(req: {
    messages: readonly EnvelopeModelMessage[];
    tools: readonly never[];
    signal?: AbortSignal;
    /** The provider's native structured output (a stand-in may ignore it). */
    output?: EnvelopeOutputFormat;
    /** Output token budget of this call. */
    maxTokens?: number;
    /** Sampling temperature of this call (a run's v2 `ai.temperature`); absent: the provider's default. */
    temperature?: number;
    /** Takes the answer's text as the provider streams it (a provider that does not stream never calls it). */
    onText?: (delta: string) => void;
  }): Promise<
    | { kind: 'final'; text: string; usage?: ModelUsage; finish?: EnvelopeFinish; cacheKey?: string }
    | { kind: 'tool_calls'; calls: unknown[]; text?: string; usage?: ModelUsage; cacheKey?: string }
  >;
}

/**
 * The model a node or request names (`provider`, `model`), or undefined when the host has none for it; may throw
 * (the CLI's `serve --model` factory).
 */
export type ModelFor = (provider: string, model: string) => EnvelopeModel | undefined;
