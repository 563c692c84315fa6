// Guarantees (issue 15): the `openai` / `openai-compatible` providers speak Chat Completions through the official
// SDK to a local server that answers in the API's real wire format (no network): the request carries the model, the
// system prompt, the tools (name, description, JSON Schema parameters), the assistant's tool calls and the FULL tool
// result JSON, the bearer key and `stream: true` with `include_usage`; a streamed answer is assembled (text deltas,
// tool-call argument fragments) with the server's token counts; a 429 with retry-after is retried after that delay
// and then succeeds; 401, 429-after-retries, context overflow, 5xx, timeout, abort (before and during the call) and
// bad tool arguments end with their MHS.HOST.MODEL_* code, and the key appears in no error.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ErrorCode, HostError } from '../../src/core/index.js';
import type { ModelMessage, ProviderTool } from '../../src/ai/model-provider.js';
import { createModelProvider } from '../../src/ai/providers/create-model-provider.js';
import { parseModelSpec } from '../../src/ai/providers/model-spec.js';
import type { ModelCallOptions } from '../../src/ai/providers/create-model-provider.js';
import { oaCompletion, oaError, oaStream } from '../helpers/openai-fixtures.js';
import { startWireServer } from '../helpers/wire-server.js';
import type { WireServer } from '../helpers/wire-server.js';

const KEY = 'sk-test-4f1c9e0b7a2d4c6e8f0a1b3c5d7e9f11';
const TOOL: ProviderTool = {
  name: 'mhs__cap__thermostat__cap_thermal_setpoint_v1',
  description: 'Capability cap.thermal.setpoint.v1 of device thermostat.',
  inputSchema: { type: 'object', properties: { setpoint_c: { type: 'number' } }, required: ['setpoint_c'] },
};
const RESULT = { command_id: 'cmd_01', outcome: 'final', receipt: { status: 'completed', output: { setpoint_c: 37 } } };
const CONVERSATION: ModelMessage[] = [
  { role: 'system', content: 'Endpoint disclosure.' },
  { role: 'user', content: 'Set 37.' },
  {
    role: 'assistant',
    content: 'Setting.',
    toolCalls: [{ id: 'call_1', name: TOOL.name, arguments: { setpoint_c: 37 } }],
  },
  { role: 'tool', toolCallId: 'call_1', name: TOOL.name, isError: false, content: RESULT },
];

let srv: WireServer;
beforeAll(async () => (srv = await startWireServer()));
afterAll(() => srv.close());

function provider(opts: ModelCallOptions = {}, spec = 'openai:gpt-4.1') {
  return createModelProvider(
    parseModelSpec(spec, { baseUrl: `${srv.url}/v1` }),
    { OPENAI_API_KEY: KEY },
    {
      maxRetries: 0,
      ...opts,
    },
  );
}

async function failure(p: Promise<unknown>): Promise<HostError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(HostError);
  const e = err as HostError;
  expect(`${e.message} ${JSON.stringify(e.details)} ${e.remediation}`).not.toContain(KEY);
  return e;
}

describe('openai provider over the Chat Completions wire format', () => {
  test('request shape: model, system prompt, tools, tool calls, full tool result, key, stream flag', async () => {
    srv.requests.length = 0;
    srv.reply(oaStream({ model: 'gpt-4.1', pieces: ['Done', ' at 37.'], usage: [120, 9] }));
    const deltas: string[] = [];
    const turn = await provider({ onDelta: (d) => deltas.push(d) }).next({ messages: CONVERSATION, tools: [TOOL] });
    expect(turn).toEqual({
      kind: 'final',
      text: 'Done at 37.',
      usage: { inputTokens: 120, outputTokens: 9 },
      cacheKey: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(deltas).toEqual(['Done', ' at 37.']);

    const [req] = srv.requests;
    expect(req).toMatchObject({ method: 'POST', path: '/v1/chat/completions' });
    expect(req!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req!.body).toMatchObject({ model: 'gpt-4.1', stream: true, stream_options: { include_usage: true } });
    expect(req!.body.tools).toEqual([
      { type: 'function', function: { name: TOOL.name, description: TOOL.description, parameters: TOOL.inputSchema } },
    ]);
    expect(req!.body.messages).toEqual([
      { role: 'system', content: 'Endpoint disclosure.' },
      { role: 'user', content: 'Set 37.' },
      {
        role: 'assistant',
        content: 'Setting.',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: TOOL.name, arguments: '{"setpoint_c":37}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: JSON.stringify(RESULT) },
    ]);
    expect(JSON.parse(req!.body.messages[3].content as string)).toEqual(RESULT);
  });

  test('a streamed tool call is assembled from its argument fragments', async () => {
    srv.reply(
      oaStream({
        model: 'gpt-4.1',
        calls: [{ id: 'call_9', name: TOOL.name, argPieces: ['{"setp', 'oint_c"', ': 40}'] }],
        usage: [200, 22],
      }),
    );
    const turn = await provider().next({ messages: CONVERSATION.slice(0, 2), tools: [TOOL] });
    expect(turn).toEqual({
      kind: 'tool_calls',
      calls: [{ id: 'call_9', name: TOOL.name, arguments: { setpoint_c: 40 } }],
      usage: { inputTokens: 200, outputTokens: 22 },
      cacheKey: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
  });

  test('not streamed: a chat.completion with tool calls, and stream is not sent', async () => {
    srv.requests.length = 0;
    srv.reply(
      oaCompletion({
        model: 'llama3.1',
        calls: [{ id: 'c1', name: TOOL.name, arguments: '{"setpoint_c":5}' }],
        usage: [50, 7],
      }),
    );
    const turn = await provider({ stream: false }, 'openai-compatible:llama3.1').next({
      messages: CONVERSATION.slice(0, 2),
      tools: [TOOL],
    });
    expect(turn).toMatchObject({ kind: 'tool_calls', calls: [{ id: 'c1', arguments: { setpoint_c: 5 } }] });
    expect(turn.usage).toEqual({ inputTokens: 50, outputTokens: 7 });
    expect(srv.requests[0]!.body.stream).toBeUndefined();
    expect(srv.requests[0]!.body.model).toBe('llama3.1');
  });

  test('a 429 with retry-after is retried after that delay, then succeeds', async () => {
    srv.requests.length = 0;
    srv.reply(
      oaError(
        429,
        { message: 'Rate limit reached for gpt-4.1', type: 'requests', code: 'rate_limit_exceeded' },
        {
          'retry-after': '1',
        },
      ),
      oaStream({ model: 'gpt-4.1', pieces: ['ok'], usage: [10, 1] }),
    );
    const turn = await provider({ maxRetries: 2 }).next({ messages: CONVERSATION.slice(0, 2), tools: [] });
    expect(turn).toMatchObject({ kind: 'final', text: 'ok' });
    expect(srv.requests).toHaveLength(2);
    expect(srv.requests[1]!.at - srv.requests[0]!.at).toBeGreaterThanOrEqual(950);
    expect(srv.requests[1]!.headers['x-stainless-retry-count']).toBe('1');
  });

  test('401 → MHS.HOST.MODEL_AUTH without the key', async () => {
    srv.reply(
      oaError(401, {
        message: `Incorrect API key provided: ${KEY}.`,
        type: 'invalid_request_error',
        code: 'invalid_api_key',
      }),
    );
    const e = await failure(provider().next({ messages: CONVERSATION, tools: [TOOL] }));
    expect(e.code).toBe(ErrorCode.HOST_MODEL_AUTH);
    expect(e.details).toMatchObject({ provider: 'openai', model: 'gpt-4.1', status: 401, code: 'invalid_api_key' });
  });

  test('429 after the retries → MHS.HOST.MODEL_QUOTA; insufficient_quota is not retryable', async () => {
    srv.reply(oaError(429, { message: 'quota', type: 'insufficient_quota', code: 'insufficient_quota' }));
    const e = await failure(provider().next({ messages: CONVERSATION, tools: [] }));
    expect(e.code).toBe(ErrorCode.HOST_MODEL_QUOTA);
    expect(e.details.reason).toBe('insufficient_quota');
    expect(e.retryable).toBe(false);
  });

  test('context overflow → MHS.HOST.MODEL_CONTEXT_TOO_LONG; 5xx → MHS.HOST.MODEL_UNAVAILABLE', async () => {
    srv.reply(
      oaError(400, {
        message: "This model's maximum context length is 128000 tokens.",
        type: 'invalid_request_error',
        param: 'messages',
        code: 'context_length_exceeded',
      }),
      oaError(503, { message: 'The server is overloaded', type: 'server_error', code: null }),
    );
    expect((await failure(provider().next({ messages: CONVERSATION, tools: [] }))).code).toBe(
      ErrorCode.HOST_MODEL_CONTEXT_TOO_LONG,
    );
    const e = await failure(provider().next({ messages: CONVERSATION, tools: [] }));
    expect(e.code).toBe(ErrorCode.HOST_MODEL_UNAVAILABLE);
    expect(e.retryable).toBe(true);
  });

  test('tool arguments that are not a JSON object → MHS.HOST.MODEL_RESPONSE_INVALID', async () => {
    srv.reply(
      oaCompletion({
        model: 'gpt-4.1',
        calls: [{ id: 'c', name: TOOL.name, arguments: '{"setpoint_c": ' }],
        usage: [1, 1],
      }),
    );
    const e = await failure(provider({ stream: false }).next({ messages: CONVERSATION, tools: [TOOL] }));
    expect(e.code).toBe(ErrorCode.HOST_MODEL_RESPONSE_INVALID);
    expect(e.details).toMatchObject({ reason: 'tool_arguments', tool: TOOL.name });
  });

  test('a slow server: --model-timeout → MHS.HOST.MODEL_UNAVAILABLE (timeout); abort mid-call → MODEL_ABORTED', async () => {
    srv.reply({ ...oaStream({ model: 'gpt-4.1', pieces: ['late'], usage: [1, 1] }), delayMs: 3000 });
    const t = await failure(provider({ timeoutMs: 200 }).next({ messages: CONVERSATION, tools: [] }));
    expect(t.code).toBe(ErrorCode.HOST_MODEL_UNAVAILABLE);
    expect(t.details.reason).toBe('timeout');
    srv.reply({ ...oaStream({ model: 'gpt-4.1', pieces: ['late'], usage: [1, 1] }), delayMs: 3000 });
    const ac = new AbortController();
    const seen = srv.requests.length;
    const call = provider().next({ messages: CONVERSATION, tools: [], signal: ac.signal });
    while (srv.requests.length === seen) await new Promise((r) => setImmediate(r));
    ac.abort();
    expect((await failure(call)).code).toBe(ErrorCode.HOST_MODEL_ABORTED);
  });

  test('an aborted signal → MHS.HOST.MODEL_ABORTED; an unreachable server → MHS.HOST.MODEL_UNAVAILABLE', async () => {
    const ac = new AbortController();
    ac.abort();
    const e = await failure(provider().next({ messages: CONVERSATION, tools: [], signal: ac.signal }));
    expect(e.code).toBe(ErrorCode.HOST_MODEL_ABORTED);
    const dead = createModelProvider(
      parseModelSpec('openai-compatible:m', { baseUrl: 'http://127.0.0.1:9/v1' }),
      { OPENAI_API_KEY: KEY },
      { maxRetries: 0 },
    );
    const u = await failure(dead.next({ messages: CONVERSATION, tools: [] }));
    expect(u.code).toBe(ErrorCode.HOST_MODEL_UNAVAILABLE);
    expect(u.details.reason).toBe('connection');
  });
});
