/**
 * Chat Completions through the official `openai` SDK (issue 15): OpenAI's own API (`openai:<model>`) and any
 * server that speaks the same API at a base URL (`openai-compatible:<model>`: vLLM, Ollama, llama.cpp's server,
 * LM Studio). Tool calling, streaming through the SDK's `chat.completions.stream` helper (usage requested with
 * `stream_options.include_usage`), the SDK's timeout and retries (429/5xx with backoff, honouring `retry-after`),
 * cancellation through the request's AbortSignal, and every failure mapped by {@link modelError}.
 */
import type OpenAI from 'openai';
import type { ModelProvider, ModelRequest, ModelTurn } from '../model-provider.js';
import { modelError } from './model-errors.js';
import type { ModelCallContext } from './model-errors.js';
import { sdkClientOptions } from './provider-options.js';
import type { NetworkProviderOptions } from './provider-options.js';
import { llmCacheKey } from '../llm-cache-key.js';
import { fromChatCompletion, toChatMessages, toChatTools, toResponseFormat } from './openai-wire.js';
import { chatCacheKeyInput } from './wire-cache-key.js';

/** The SDK, imported on the first call: a process that never calls this provider never loads it. */
let sdk: Promise<typeof OpenAI> | undefined;
const loadSdk = (): Promise<typeof OpenAI> => (sdk ??= import('openai').then((m) => m.default));

function sdkErrors(S: typeof OpenAI) {
  return {
    SdkError: S.OpenAIError,
    APIError: S.APIError,
    APIUserAbortError: S.APIUserAbortError,
    APIConnectionError: S.APIConnectionError,
    APIConnectionTimeoutError: S.APIConnectionTimeoutError,
  };
}

/** A model behind the Chat Completions API. */
export class OpenAIChatProvider implements ModelProvider {
  readonly name: string;
  readonly meter: { provider: string; model: string };
  #client: Promise<{ client: OpenAI; errors: ReturnType<typeof sdkErrors> }> | undefined;
  readonly #ctx: ModelCallContext;
  readonly #options: NetworkProviderOptions;

  /** `provider` is the metered provider id: `openai` or `openai-compatible`. */
  constructor(provider: 'openai' | 'openai-compatible', options: NetworkProviderOptions) {
    this.#options = options;
    this.name = `${provider}:${options.model}`;
    this.meter = { provider, model: options.model };
    this.#ctx = { provider, model: options.model, apiKey: options.apiKey };
  }

  async next(req: ModelRequest): Promise<ModelTurn> {
    const o = this.#options;
    // Local servers know the older `max_tokens`; OpenAI's newer models require `max_completion_tokens`.
    const limit = this.meter.provider === 'openai' ? 'max_completion_tokens' : 'max_tokens';
    const maxTokens = req.maxTokens ?? o.maxTokens;
    const body = {
      model: o.model,
      messages: toChatMessages(req.messages),
      ...(req.output
        ? { response_format: toResponseFormat(req.output) }
        : req.tools.length
          ? { tools: toChatTools(req.tools) }
          : {}),
      ...(maxTokens !== undefined ? { [limit]: maxTokens } : {}),
      ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
    };
    const call = req.signal ? { signal: req.signal } : {};
    // Keyed on the body as sent; the streaming fields added below are transport (replay.md §A).
    const cacheKey = llmCacheKey(chatCacheKeyInput(this.meter.provider, body));
    const turn = (c: OpenAI.Chat.Completions.ChatCompletion): ModelTurn => ({ ...fromChatCompletion(c), cacheKey });
    const { client, errors } = await (this.#client ??= loadSdk().then((S) => ({
      client: new S(sdkClientOptions(o)),
      errors: sdkErrors(S),
    })));
    try {
      if (o.stream === false) return turn(await client.chat.completions.create(body, call));
      const stream = client.chat.completions.stream(
        { ...body, stream: true, stream_options: { include_usage: true } },
        call,
      );
      if (o.onDelta || req.onText)
        stream.on('content', (delta) => {
          o.onDelta?.(delta);
          req.onText?.(delta);
        });
      return turn(await stream.finalChatCompletion());
    } catch (err) {
      throw modelError(err, errors, this.#ctx);
    }
  }
}
