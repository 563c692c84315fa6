// Guarantees (issue 15 "the LLM cache-key recipe fed by the real request"; OpenWOP replay.md §"LLM cache-key recipe"
// §A-§B): each provider's turn carries the cache key of the request body its wire server actually received, the
// expected key rebuilt here from that body by the recipe's own words (model id, system prompt and messages with
// content kept, tools {name, description, parameters}, output bound, structured output; any other body field under
// `providerOptions["vendor.<provider>.<field>"]`); streaming flags are transport and change nothing; a different
// output bound or conversation is a different key. Local servers speaking each real wire format, no network.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { llmCacheKey } from '../../src/ai/llm-cache-key.js';
import type { ModelMessage, ProviderTool } from '../../src/ai/model-provider.js';
import { createModelProvider } from '../../src/ai/providers/create-model-provider.js';
import type { ModelCallOptions } from '../../src/ai/providers/create-model-provider.js';
import { parseModelSpec } from '../../src/ai/providers/model-spec.js';
import { ScriptedProvider } from '../../src/ai/scripted-provider.js';
import { anMessage, anStream } from '../helpers/anthropic-fixtures.js';
import { oaCompletion, oaStream } from '../helpers/openai-fixtures.js';
import { startWireServer } from '../helpers/wire-server.js';
import type { WireServer } from '../helpers/wire-server.js';

const TOOL: ProviderTool = {
  name: 'mhs__cap__thermostat__cap_thermal_setpoint_v1',
  description: 'Capability cap.thermal.setpoint.v1 of device thermostat.',
  inputSchema: { type: 'object', properties: { setpoint_c: { type: 'number' } }, required: ['setpoint_c'] },
};
const CONVERSATION: ModelMessage[] = [
  { role: 'system', content: 'Endpoint disclosure.' },
  { role: 'user', content: 'Set 37.' },
  {
    role: 'assistant',
    content: 'Setting.',
    toolCalls: [{ id: 'call_1', name: TOOL.name, arguments: { setpoint_c: 37 } }],
  },
  { role: 'tool', toolCallId: 'call_1', name: TOOL.name, isError: false, content: { outcome: 'final' } },
];
const OUTPUT = { name: 'envelope', schema: { type: 'object', properties: { title: { type: 'string' } } } };

let srv: WireServer;
beforeAll(async () => (srv = await startWireServer()));
afterAll(() => srv.close());

function model(spec: string, opts: ModelCallOptions = {}) {
  const env = { OPENAI_API_KEY: 'sk-test-cache-key', ANTHROPIC_API_KEY: 'sk-ant-test-cache-key' };
  const baseUrl = spec.startsWith('anthropic') ? srv.url : `${srv.url}/v1`;
  return createModelProvider(parseModelSpec(spec, { baseUrl }), env, { maxRetries: 0, ...opts });
}

/* eslint-disable @typescript-eslint/no-explicit-any -- wire bodies are read loosely */
/** The recipe input of a Chat Completions body, by replay.md §A: tool calls as content blocks, tools unwrapped. */
function chatInput(provider: string, b: any): any {
  const messages = b.messages.map((m: any) =>
    m.role === 'tool'
      ? { role: 'tool', content: m.content, toolCallId: m.tool_call_id }
      : m.tool_calls
        ? { role: m.role, content: [{ type: 'text', text: m.content }, ...m.tool_calls] }
        : { role: m.role, content: m.content },
  );
  return {
    provider,
    model: b.model,
    messages,
    ...(b.tools ? { tools: b.tools.map((t: any) => t.function) } : {}),
    ...(b.max_tokens !== undefined ? { maxOutputTokens: b.max_tokens } : {}),
    ...(b.max_completion_tokens !== undefined ? { maxOutputTokens: b.max_completion_tokens } : {}),
  };
}

describe('the cache key of the request a provider sent', () => {
  test('Chat Completions: the key of the received body; stream flags are transport; the bound is not', async () => {
    srv.requests.length = 0;
    srv.reply(
      oaStream({ model: 'llama3.1', pieces: ['ok'], usage: [10, 1] }),
      oaCompletion({ model: 'llama3.1', content: 'ok', usage: [10, 1] }),
      oaCompletion({ model: 'llama3.1', content: 'ok', usage: [10, 1] }),
    );
    const req = { messages: CONVERSATION, tools: [TOOL] };
    const streamed = await model('openai-compatible:llama3.1').next(req);
    const whole = await model('openai-compatible:llama3.1', { stream: false }).next(req);
    const bounded = await model('openai-compatible:llama3.1', { stream: false }).next({ ...req, maxTokens: 64 });
    const [a, b, c] = srv.requests.map((r) => r.body);
    expect(a.stream).toBe(true);
    expect(b.stream).toBeUndefined();
    expect(streamed.cacheKey).toBe(llmCacheKey(chatInput('openai-compatible', a)));
    expect(whole.cacheKey).toBe(streamed.cacheKey);
    expect(c.max_tokens).toBe(64);
    expect(bounded.cacheKey).toBe(llmCacheKey(chatInput('openai-compatible', c)));
    expect(bounded.cacheKey).not.toBe(streamed.cacheKey);
  });

  test('Chat Completions structured output: response_format is responseFormat, its other fields are carried', async () => {
    srv.requests.length = 0;
    srv.reply(oaCompletion({ model: 'gpt-4.1', content: '{"title":"t"}', usage: [10, 3] }));
    const turn = await model('openai:gpt-4.1', { stream: false }).next({
      messages: CONVERSATION.slice(0, 2),
      tools: [],
      output: OUTPUT,
    });
    const body = srv.requests[0]!.body;
    const { schema, ...rest } = body.response_format.json_schema;
    expect(turn.cacheKey).toBe(
      llmCacheKey({
        ...chatInput('openai', body),
        responseFormat: { type: 'json', schema },
        providerOptions: { 'vendor.openai.json_schema': rest },
      }),
    );
  });

  test('Messages: system first, blocks kept, input_schema as parameters, tool_choice carried', async () => {
    srv.requests.length = 0;
    srv.reply(
      anStream({ model: 'claude-sonnet-4-5', pieces: ['ok'], usage: [10, 1] }),
      anMessage({
        model: 'claude-sonnet-4-5',
        uses: [{ id: 'toolu_9', name: 'envelope', input: { title: 't' } }],
        usage: [10, 3],
      }),
    );
    const plain = await model('anthropic:claude-sonnet-4-5').next({ messages: CONVERSATION, tools: [TOOL] });
    const structured = await model('anthropic:claude-sonnet-4-5', { stream: false }).next({
      messages: CONVERSATION.slice(0, 2),
      tools: [],
      output: OUTPUT,
    });
    const input = (b: any) => ({
      provider: 'anthropic',
      model: b.model,
      messages: [{ role: 'system', content: b.system }, ...b.messages],
      tools: b.tools.map((t: any) => ({ name: t.name, description: t.description, parameters: t.input_schema })),
      maxOutputTokens: b.max_tokens,
      ...(b.tool_choice ? { providerOptions: { 'vendor.anthropic.tool_choice': b.tool_choice } } : {}),
    });
    const [a, b] = srv.requests.map((r) => r.body);
    expect(a.stream).toBe(true);
    expect(plain.cacheKey).toBe(llmCacheKey(input(a)));
    expect(b.tool_choice).toEqual({ type: 'tool', name: 'envelope' });
    expect(structured.cacheKey).toBe(llmCacheKey(input(b)));
  });

  test('the scripted model keys its requests too: the same conversation the same key, another one another', async () => {
    const p = new ScriptedProvider({ turns: [{ final: 'a' }, { final: 'b' }] } as never);
    const one = await p.next({ messages: CONVERSATION.slice(0, 2), tools: [TOOL] });
    expect(one.cacheKey).toMatch(/^[0-9a-f]{64}$/);
    expect((await p.next({ messages: CONVERSATION.slice(0, 2), tools: [TOOL] })).cacheKey).toBe(one.cacheKey);
    expect((await p.next({ messages: CONVERSATION.slice(0, 2), tools: [] })).cacheKey).not.toBe(one.cacheKey);
  });
});
