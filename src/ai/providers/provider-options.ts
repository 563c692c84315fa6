/** Options every network model provider takes (issue 15). */

/** Default per-request timeout of a model call. */
export const DEFAULT_MODEL_TIMEOUT_MS = 120_000;

/** Default number of SDK retries on 408/409/429/5xx (with backoff, honouring `retry-after`). */
export const DEFAULT_MODEL_RETRIES = 3;

/** Default `max_tokens` of an answer where the API requires one (Anthropic Messages). */
export const DEFAULT_MAX_TOKENS = 4096;

/** How a network provider is reached and how it calls. */
export interface NetworkProviderOptions {
  /** The provider's model id. */
  model: string;
  /** Sent as the SDK's auth header; never recorded. */
  apiKey: string;
  /** API root; unset for the provider's public API. */
  baseUrl?: string;
  /** Per-request timeout in ms (default {@link DEFAULT_MODEL_TIMEOUT_MS}). */
  timeoutMs?: number;
  /** SDK retries on 429/5xx (default {@link DEFAULT_MODEL_RETRIES}). */
  maxRetries?: number;
  /** Stream the answer (default true). */
  stream?: boolean;
  /** Most tokens of one answer. */
  maxTokens?: number;
  /** Each streamed text fragment, as it arrives (for printing). */
  onDelta?: (text: string) => void;
}

/**
 * The client options both official SDKs take under the same names. The log level is fixed, so an `OPENAI_LOG` /
 * `ANTHROPIC_LOG` in the environment cannot turn on request dumps (keys never in logs).
 */
export function sdkClientOptions(o: NetworkProviderOptions): {
  apiKey: string;
  baseURL?: string;
  timeout: number;
  maxRetries: number;
  logLevel: 'warn';
} {
  return {
    apiKey: o.apiKey,
    ...(o.baseUrl ? { baseURL: o.baseUrl } : {}),
    timeout: o.timeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS,
    maxRetries: o.maxRetries ?? DEFAULT_MODEL_RETRIES,
    logLevel: 'warn',
  };
}
