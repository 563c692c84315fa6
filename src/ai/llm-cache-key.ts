/**
 * The LLM cache-key recipe (OpenWOP replay.md §"LLM cache-key recipe" §A-§B, recipe v2 of RFC 0150 §C; normative for
 * every LLM call at multi-agent execution model v4, RFC 0041 §A): SHA-256, lowercase hex, over the RFC 8785 JCS bytes
 * of the semantic request `{recipe, provider, model, request: {...}, providerOptions?}`. Transport-only fields
 * (stream, timeouts, trace context, request/run/tenant ids, metadata, user) never reach it. Tested against every
 * published vector (vendor/openwop/vectors/semantic-request-digest-v2.json).
 */
import { ErrorCode, H, HostError, isJsonObject } from '../core/index.js';

/** The recipe stamp in every preimage, so a key of the retired v1 rules cannot be mistaken for a v2 key. */
export const LLM_CACHE_KEY_RECIPE = 'openwop-semantic-request-v2';

/** One message, its `content` kept verbatim (a string or an array of content blocks). */
export interface CacheKeyMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | Array<{ type: string; [k: string]: unknown }>;
  name?: string;
  toolCallId?: string;
}

/** One offered tool: `parameters` is its JSON Schema. */
export interface CacheKeyTool {
  name: string;
  description?: string;
  parameters: Record<string, unknown>;
}

/** `LLMCacheKeyInput` (replay.md §A, v2): exactly the fields that can change what the model returns. */
export interface LlmCacheKeyInput {
  /** Canonical provider id, lowercase ASCII (the `provider.usage` provider). */
  provider: string;
  /** The model id as the provider is sent it (no normalisation). */
  model: string;
  messages: readonly CacheKeyMessage[];
  tools?: readonly CacheKeyTool[];
  temperature?: number;
  topP?: number;
  topK?: number;
  responseFormat?: { type: 'text' | 'json' | 'tool_call'; schema?: Record<string, unknown> };
  maxOutputTokens?: number;
  stop?: readonly string[];
  seed?: number;
  safetySettings?: Record<string, unknown>;
  /** Every other option that can alter the output, keyed `vendor.<provider>.<option>`: carried, never dropped. */
  providerOptions?: Record<string, unknown>;
}

const NUMBERS = ['temperature', 'topP', 'topK', 'maxOutputTokens', 'seed'] as const;

/**
 * The canonical semantic request (replay.md §B step 1): absent optionals omitted, `tools` sorted by name in UTF-16
 * code units (RFC 0212 §D; never a locale comparator), message order and content kept, `providerOptions` beside
 * `request`.
 */
export function semanticRequest(input: LlmCacheKeyInput): Record<string, unknown> {
  const request: Record<string, unknown> = { messages: input.messages };
  if (input.tools && input.tools.length > 0)
    request.tools = [...input.tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const k of NUMBERS) if (input[k] !== undefined) request[k] = input[k];
  if (input.stop !== undefined) request.stop = input.stop;
  if (input.responseFormat !== undefined) request.responseFormat = input.responseFormat;
  if (input.safetySettings !== undefined) request.safetySettings = input.safetySettings;
  return {
    recipe: LLM_CACHE_KEY_RECIPE,
    provider: input.provider,
    model: input.model,
    request,
    ...(input.providerOptions !== undefined ? { providerOptions: input.providerOptions } : {}),
  };
}

/**
 * The LLM cache key of one request: 64 lowercase hex characters. JCS (the `canonicalize` package) applies no Unicode
 * normalisation, so neither does this.
 * @throws HostError `MHS.HOST.JSON_UNENCODABLE` for a lone surrogate (not I-JSON).
 */
export function llmCacheKey(input: LlmCacheKeyInput): string {
  return H(semanticRequest(input));
}

function bad(path: string, message: string): HostError {
  return new HostError(ErrorCode.INVALID_ARGUMENT, message, { path });
}

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);

function message(m: unknown, i: number): CacheKeyMessage {
  const at = `/messages/${i}`;
  if (!isJsonObject(m)) throw bad(at, 'a message is an object');
  if (typeof m.role !== 'string' || !ROLES.has(m.role))
    throw bad(`${at}/role`, 'role is system, user, assistant or tool');
  const c = m.content;
  const blocks = Array.isArray(c) && c.every((b) => isJsonObject(b) && typeof b.type === 'string');
  if (typeof c !== 'string' && !blocks) throw bad(`${at}/content`, 'content is a string or an array of typed blocks');
  if (m.name !== undefined && typeof m.name !== 'string') throw bad(`${at}/name`, 'name is a string');
  if (m.toolCallId !== undefined && typeof m.toolCallId !== 'string')
    throw bad(`${at}/toolCallId`, 'toolCallId is a string');
  return m as unknown as CacheKeyMessage;
}

function tool(t: unknown, i: number): CacheKeyTool {
  const at = `/tools/${i}`;
  if (!isJsonObject(t) || typeof t.name !== 'string' || !t.name) throw bad(`${at}/name`, 'a tool has a name');
  if (!isJsonObject(t.parameters)) throw bad(`${at}/parameters`, 'parameters is a JSON Schema object');
  if (t.description !== undefined && typeof t.description !== 'string')
    throw bad(`${at}/description`, 'description is a string');
  return {
    name: t.name,
    parameters: t.parameters,
    ...(t.description !== undefined ? { description: t.description } : {}),
  };
}

/**
 * Reads an `LLMCacheKeyInput` from untrusted JSON (the `llm-cache-key` seam): recipe fields are checked and kept, any
 * other top-level field is transport or bookkeeping and ignored (host-sample-test-seams.md §4). A recipe field of the
 * wrong type is refused rather than dropped: dropping an outcome-affecting field is the wrong hit the recipe exists
 * to prevent.
 * @throws HostError `invalid_argument` (data.path) for a missing or malformed field.
 */
export function parseLlmCacheKeyInput(body: unknown): LlmCacheKeyInput {
  if (!isJsonObject(body)) throw bad('', 'the body is a JSON object');
  const b = body;
  if (typeof b.provider !== 'string' || !b.provider) throw bad('/provider', 'provider is a non-empty string');
  if (typeof b.model !== 'string' || !b.model) throw bad('/model', 'model is a non-empty string');
  if (!Array.isArray(b.messages)) throw bad('/messages', 'messages is an array');
  const out: LlmCacheKeyInput = { provider: b.provider, model: b.model, messages: b.messages.map(message) };
  if (b.tools !== undefined) {
    if (!Array.isArray(b.tools)) throw bad('/tools', 'tools is an array');
    out.tools = b.tools.map(tool);
  }
  for (const k of NUMBERS) {
    const v = b[k];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isFinite(v)) throw bad(`/${k}`, `${k} is a number`);
    out[k] = v;
  }
  if (b.stop !== undefined) {
    if (!Array.isArray(b.stop) || !b.stop.every((s) => typeof s === 'string'))
      throw bad('/stop', 'stop is an array of strings');
    out.stop = b.stop as string[];
  }
  const rf = b.responseFormat;
  if (rf !== undefined) {
    if (!isJsonObject(rf) || !['text', 'json', 'tool_call'].includes(rf.type as string))
      throw bad('/responseFormat', 'responseFormat.type is text, json or tool_call');
    if (rf.schema !== undefined && !isJsonObject(rf.schema)) throw bad('/responseFormat/schema', 'schema is an object');
    out.responseFormat = rf as LlmCacheKeyInput['responseFormat'];
  }
  for (const k of ['safetySettings', 'providerOptions'] as const) {
    const v = b[k];
    if (v === undefined) continue;
    if (!isJsonObject(v)) throw bad(`/${k}`, `${k} is an object`);
    out[k] = v;
  }
  return out;
}
