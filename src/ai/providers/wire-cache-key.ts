/**
 * The LLM cache-key input (replay.md §A, recipe v2) of a request body exactly as a provider sends it: the recipe's
 * named fields taken from the wire fields they are, transport fields left out, and every other field of the body
 * carried as `providerOptions["vendor.<provider>.<field>"]` (replay.md §B step 1: silently dropping an option that
 * can alter the output is nonconformant). Pure: no SDK client, no I/O.
 */
import { isJsonObject } from '../../core/index.js';
import type { CacheKeyMessage, CacheKeyTool, LlmCacheKeyInput } from '../llm-cache-key.js';
import type { ModelMessage, ModelRequest } from '../model-provider.js';

type Body = Record<string, unknown>;
type Block = { type: string; [k: string]: unknown };

/** Fields that cannot change what the model returns (replay.md §A "Transport-only fields"). */
const TRANSPORT = new Set(['stream', 'stream_options', 'metadata', 'user', 'store']);

function vendorOptions(provider: string, body: Body, named: ReadonlySet<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body))
    if (v !== undefined && !named.has(k) && !TRANSPORT.has(k)) out[`vendor.${provider}.${k}`] = v;
  return out;
}

function numbers(body: Body, map: Record<string, 'temperature' | 'topP' | 'topK' | 'maxOutputTokens' | 'seed'>) {
  const out: Partial<LlmCacheKeyInput> = {};
  for (const [wire, field] of Object.entries(map)) if (typeof body[wire] === 'number') out[field] = body[wire];
  return out;
}

function stopOf(v: unknown): Pick<LlmCacheKeyInput, 'stop'> {
  if (typeof v === 'string') return { stop: [v] };
  return Array.isArray(v) ? { stop: v as string[] } : {};
}

function withOptions(input: LlmCacheKeyInput, options: Record<string, unknown>): LlmCacheKeyInput {
  return Object.keys(options).length ? { ...input, providerOptions: options } : input;
}

const CHAT_NAMED = new Set([
  'model',
  'messages',
  'tools',
  'response_format',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'seed',
  'stop',
]);

/** A Chat Completions message: assistant tool calls become content blocks, kept in their wire shape. */
function chatMessage(m: Body): CacheKeyMessage {
  const role = m.role as CacheKeyMessage['role'];
  const name = typeof m.name === 'string' ? { name: m.name } : {};
  if (role === 'tool')
    return { role, content: m.content as CacheKeyMessage['content'], toolCallId: String(m.tool_call_id) };
  const calls = Array.isArray(m.tool_calls) ? (m.tool_calls as Block[]) : [];
  if (role === 'assistant' && calls.length) {
    const text = typeof m.content === 'string' && m.content ? [{ type: 'text', text: m.content }] : [];
    return { role, content: [...text, ...calls], ...name };
  }
  return { role, content: (m.content ?? '') as CacheKeyMessage['content'], ...name };
}

/** The cache-key input of a Chat Completions request body (`openai`, `openai-compatible`). */
export function chatCacheKeyInput(provider: string, body: Body): LlmCacheKeyInput {
  const tools = ((body.tools as Body[] | undefined) ?? []).flatMap((t): CacheKeyTool[] => {
    const f = t.function as Body | undefined;
    if (t.type !== 'function' || !f) return [];
    return [
      {
        name: String(f.name),
        ...(typeof f.description === 'string' ? { description: f.description } : {}),
        parameters: (f.parameters as Record<string, unknown> | undefined) ?? {},
      },
    ];
  });
  const options = vendorOptions(provider, body, CHAT_NAMED);
  const rf = body.response_format as Body | undefined;
  let responseFormat: LlmCacheKeyInput['responseFormat'];
  if (rf?.type === 'json_schema' && isJsonObject(rf.json_schema)) {
    const { schema, ...rest } = rf.json_schema;
    responseFormat = { type: 'json', ...(isJsonObject(schema) ? { schema } : {}) };
    if (Object.keys(rest).length) options[`vendor.${provider}.json_schema`] = rest;
  } else if (rf) responseFormat = { type: rf.type === 'text' ? 'text' : 'json' };
  return withOptions(
    {
      provider,
      model: String(body.model),
      messages: (body.messages as Body[]).map(chatMessage),
      ...(tools.length ? { tools } : {}),
      ...numbers(body, {
        temperature: 'temperature',
        top_p: 'topP',
        seed: 'seed',
        max_tokens: 'maxOutputTokens',
        max_completion_tokens: 'maxOutputTokens',
      }),
      ...stopOf(body.stop),
      ...(responseFormat ? { responseFormat } : {}),
    },
    options,
  );
}

const MESSAGES_NAMED = new Set([
  'model',
  'system',
  'messages',
  'tools',
  'max_tokens',
  'temperature',
  'top_p',
  'top_k',
  'stop_sequences',
]);

/** The cache-key input of an Anthropic Messages request body: `system` is the first message, blocks verbatim. */
export function messagesCacheKeyInput(body: Body): LlmCacheKeyInput {
  const system = body.system as CacheKeyMessage['content'] | undefined;
  const messages = (body.messages as Body[]).map((m): CacheKeyMessage => ({
    role: m.role as 'user' | 'assistant',
    content: m.content as CacheKeyMessage['content'],
  }));
  const tools = ((body.tools as Body[] | undefined) ?? []).map((t): CacheKeyTool => ({
    name: String(t.name),
    ...(typeof t.description === 'string' ? { description: t.description } : {}),
    parameters: (t.input_schema as Record<string, unknown> | undefined) ?? {},
  }));
  return withOptions(
    {
      provider: 'anthropic',
      model: String(body.model),
      messages: [...(system !== undefined ? [{ role: 'system' as const, content: system }] : []), ...messages],
      ...(tools.length ? { tools } : {}),
      ...numbers(body, { temperature: 'temperature', top_p: 'topP', top_k: 'topK', max_tokens: 'maxOutputTokens' }),
      ...stopOf(body.stop_sequences),
    },
    vendorOptions('anthropic', body, MESSAGES_NAMED),
  );
}

function requestMessage(m: ModelMessage): CacheKeyMessage {
  if (m.role === 'tool')
    return { role: 'tool', content: JSON.stringify(m.content), toolCallId: m.toolCallId, name: m.name };
  if (m.role !== 'assistant') return { role: m.role, content: m.content };
  if (!m.toolCalls.length) return { role: 'assistant', content: m.content ?? '' };
  const text = m.content ? [{ type: 'text', text: m.content }] : [];
  const calls = m.toolCalls.map((c) => ({ type: 'tool_call', id: c.id, name: c.name, arguments: c.arguments }));
  return { role: 'assistant', content: [...text, ...calls] };
}

/**
 * The cache-key input of a {@link ModelRequest} for a model with no wire format of its own (the scripted provider):
 * the conversation, the offered tools, structured output as `responseFormat` and the output budget.
 */
export function modelRequestCacheKeyInput(
  meter: { provider: string; model: string },
  req: ModelRequest,
): LlmCacheKeyInput {
  const tools = req.output
    ? []
    : req.tools.map((t) => ({
        name: t.name,
        description: t.description,
        parameters: t.inputSchema as Record<string, unknown>,
      }));
  return {
    provider: meter.provider,
    model: meter.model,
    messages: req.messages.map(requestMessage),
    ...(tools.length ? { tools } : {}),
    ...(req.output ? { responseFormat: { type: 'json', schema: req.output.schema as Record<string, unknown> } } : {}),
    ...(req.maxTokens !== undefined ? { maxOutputTokens: req.maxTokens } : {}),
  };
}
