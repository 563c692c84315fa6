/**
 * Anthropic Messages through the official `@anthropic-ai/sdk` (issue 15, `anthropic:<model>`): tool use,
 * streaming through the SDK's `messages.stream` helper (MessageStream assembles text and `input_json_delta`
 * fragments), the SDK's timeout and retries (429/5xx/529 with backoff, honouring `retry-after`), cancellation
 * through the request's AbortSignal, and every failure mapped by {@link modelError}.
 */
import type Anthropic from '@anthropic-ai/sdk';
import type { ModelProvider, ModelRequest, ModelTurn } from '../model-provider.js';
import {
  fromAnthropicMessage,
  fromAnthropicStructured,
  toAnthropicConversation,
  toAnthropicTools,
  toOutputTool,
} from './anthropic-wire.js';
import { llmCacheKey } from '../llm-cache-key.js';
import { modelError } from './model-errors.js';
import type { ModelCallContext } from './model-errors.js';
import { DEFAULT_MAX_TOKENS, sdkClientOptions } from './provider-options.js';
import type { NetworkProviderOptions } from './provider-options.js';
import { messagesCacheKeyInput } from './wire-cache-key.js';

/** The SDK, imported on the first call: a process that never calls this provider never loads it. */
let sdk: Promise<typeof Anthropic> | undefined;
const loadSdk = (): Promise<typeof Anthropic> => (sdk ??= import('@anthropic-ai/sdk').then((m) => m.default));

function sdkErrors(S: typeof Anthropic) {
  return {
    SdkError: S.AnthropicError,
    APIError: S.APIError,
    APIUserAbortError: S.APIUserAbortError,
    APIConnectionError: S.APIConnectionError,
    APIConnectionTimeoutError: S.APIConnectionTimeoutError,
  };
}

/** A Claude model behind the Messages API. */
export class AnthropicProvider implements ModelProvider {
  readonly name: string;
  readonly meter: { provider: string; model: string };
  #client: Promise<{ client: Anthropic; errors: ReturnType<typeof sdkErrors> }> | undefined;
  readonly #ctx: ModelCallContext;
  readonly #options: NetworkProviderOptions;

  constructor(options: NetworkProviderOptions) {
    this.#options = options;
    this.name = `anthropic:${options.model}`;
    this.meter = { provider: 'anthropic', model: options.model };
    this.#ctx = { provider: 'anthropic', model: options.model, apiKey: options.apiKey };
  }

  async next(req: ModelRequest): Promise<ModelTurn> {
    const o = this.#options;
    const output = req.output;
    const body = {
      model: o.model,
      max_tokens: req.maxTokens ?? o.maxTokens ?? DEFAULT_MAX_TOKENS,
      // The Messages API takes 0..1; a v2 run's 0..2 above 1 is refused by the provider, not clamped here.
      ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
      ...toAnthropicConversation(req.messages),
      ...(output ? toOutputTool(output) : req.tools.length ? { tools: toAnthropicTools(req.tools) } : {}),
    };
    const call = req.signal ? { signal: req.signal } : {};
    const cacheKey = llmCacheKey(messagesCacheKeyInput(body));
    const turn = (m: Anthropic.Messages.Message): ModelTurn => ({
      ...(output ? fromAnthropicStructured(m, output.name) : fromAnthropicMessage(m)),
      cacheKey,
    });
    const { client, errors } = await (this.#client ??= loadSdk().then((S) => ({
      client: new S(sdkClientOptions(o)),
      errors: sdkErrors(S),
    })));
    try {
      if (o.stream === false) return turn(await client.messages.create(body, call));
      const stream = client.messages.stream(body, call);
      if (o.onDelta || req.onText)
        stream.on('text', (delta) => {
          o.onDelta?.(delta);
          req.onText?.(delta);
        });
      return turn(await stream.finalMessage());
    } catch (err) {
      throw modelError(err, errors, this.#ctx);
    }
  }
}
