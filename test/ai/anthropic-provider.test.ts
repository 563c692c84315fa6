// Guarantees (issue 15): the `anthropic` provider speaks Messages through the official SDK to a local server that
// answers in the API's real wire format (no network): the request carries the model, `max_tokens`, the top-level
// `system`, the tools (`input_schema`), the assistant's `tool_use` blocks and the FULL tool result JSON as a
// `tool_result` block with `is_error`, the key, and `stream: true`; a streamed answer is assembled from
// message_start / content_block_* (text_delta, input_json_delta) / message_delta / message_stop with the server's
// token counts; a 429 with retry-after is retried after that delay and then succeeds; 401, 529, a too-long prompt
// and abort end with their MHS.HOST.MODEL_* code, and the key appears in no error. A call's `temperature` and
// `maxTokens` go on the request as `temperature` and `max_tokens` and change its LLM cache key.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ErrorCode, HostError } from '../../src/core/index.js';
import type { ModelMessage, ProviderTool } from '../../src/ai/model-provider.js';
import { createModelProvider } from '../../src/ai/providers/create-model-provider.js';
import type { ModelCallOptions } from '../../src/ai/providers/create-model-provider.js';
import { parseModelSpec } from '../../src/ai/providers/model-spec.js';
import { anError, anMessage, anStream } from '../helpers/anthropic-fixtures.js';
import { startWireServer } from '../helpers/wire-server.js';
import type { Recorded, WireServer } from '../helpers/wire-server.js';

const KEY = 'sk-ant-api03-test-7d1e4b2a9c0f46e3b5a8d2c1e0f9a7b6';
const MODEL = 'claude-sonnet-4-5';
const TOOL: ProviderTool = {
  name: 'mhs__cap__thermostat__cap_thermal_setpoint_v1',
  description: 'Capability cap.thermal.setpoint.v1 of device thermostat.',
  inputSchema: { type: 'object', properties: { setpoint_c: { type: 'number' } }, required: ['setpoint_c'] },
};
const RESULT = { error: { mhs_code: 'MHS.LIMIT.RANGE', message: 'out of range', remediation: 'use 4..95' } };
const CONVERSATION: ModelMessage[] = [
  { role: 'system', content: 'Endpoint disclosure.' },
  { role: 'user', content: 'Set 500.' },
  { role: 'assistant', content: null, toolCalls: [{ id: 'toolu_1', name: TOOL.name, arguments: { setpoint_c: 500 } }] },
  { role: 'tool', toolCallId: 'toolu_1', name: TOOL.name, isError: true, content: RESULT },
];

let srv: WireServer;
beforeAll(async () => (srv = await startWireServer()));
afterAll(() => srv.close());

function provider(opts: ModelCallOptions = {}) {
  return createModelProvider(
    parseModelSpec(`anthropic:${MODEL}`, { baseUrl: srv.url }),
    { ANTHROPIC_API_KEY: KEY },
    {
      maxRetries: 0,
      ...opts,
    },
  );
}

/** The SDK sends the key in `x-api-key` or as a bearer token (both are the API's documented auth headers). */
function sentKey(r: Recorded): string | undefined {
  return (r.headers['x-api-key'] as string | undefined) ?? r.headers.authorization?.replace(/^Bearer /, '');
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

describe('anthropic provider over the Messages wire format', () => {
  test('request shape: model, max_tokens, system, tools, tool_use, tool_result with is_error, key, stream', async () => {
    srv.requests.length = 0;
    srv.reply(anStream({ model: MODEL, pieces: ['Refused: ', 'out of range.'], usage: [310, 12] }));
    const deltas: string[] = [];
    const turn = await provider({ onDelta: (d) => deltas.push(d) }).next({ messages: CONVERSATION, tools: [TOOL] });
    expect(turn).toEqual({
      kind: 'final',
      text: 'Refused: out of range.',
      usage: { inputTokens: 310, outputTokens: 12 },
      cacheKey: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(deltas).toEqual(['Refused: ', 'out of range.']);

    const [req] = srv.requests;
    expect(req).toMatchObject({ method: 'POST', path: '/v1/messages' });
    expect(sentKey(req!)).toBe(KEY);
    expect(req!.headers['anthropic-version']).toBeTruthy();
    expect(req!.body).toMatchObject({ model: MODEL, max_tokens: 4096, stream: true, system: 'Endpoint disclosure.' });
    expect(req!.body.tools).toEqual([
      { name: TOOL.name, description: TOOL.description, input_schema: TOOL.inputSchema },
    ]);
    expect(req!.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Set 500.' }] },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_1', name: TOOL.name, input: { setpoint_c: 500 } }],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: JSON.stringify(RESULT), is_error: true }],
      },
    ]);
  });

  test('a call temperature and output budget are sent as temperature and max_tokens, and key the call', async () => {
    srv.requests.length = 0;
    srv.reply(anStream({ model: MODEL, pieces: ['ok'], usage: [5, 1] }));
    srv.reply(anStream({ model: MODEL, pieces: ['ok'], usage: [5, 1] }));
    const p = provider();
    const sampled = await p.next({ messages: CONVERSATION.slice(0, 2), tools: [], temperature: 0.25, maxTokens: 64 });
    const plain = await p.next({ messages: CONVERSATION.slice(0, 2), tools: [] });
    expect(srv.requests[0]!.body).toMatchObject({ temperature: 0.25, max_tokens: 64 });
    expect(srv.requests[1]!.body).not.toHaveProperty('temperature');
    expect(sampled.cacheKey).not.toBe(plain.cacheKey);
  });

  test('a streamed tool use is assembled from input_json_delta fragments, with the text before it', async () => {
    srv.reply(
      anStream({
        model: MODEL,
        pieces: ['Trying 40.'],
        uses: [{ id: 'toolu_2', name: TOOL.name, jsonPieces: ['{"setpoi', 'nt_c": 4', '0}'] }],
        usage: [400, 55],
      }),
    );
    const turn = await provider().next({ messages: CONVERSATION, tools: [TOOL] });
    expect(turn).toEqual({
      kind: 'tool_calls',
      text: 'Trying 40.',
      calls: [{ id: 'toolu_2', name: TOOL.name, arguments: { setpoint_c: 40 } }],
      usage: { inputTokens: 400, outputTokens: 55 },
      cacheKey: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
  });

  test('not streamed: a message with a tool_use block', async () => {
    srv.requests.length = 0;
    srv.reply(
      anMessage({
        model: MODEL,
        uses: [{ id: 'toolu_3', name: TOOL.name, input: { setpoint_c: 4 } }],
        usage: [90, 30],
      }),
    );
    const turn = await provider({ stream: false }).next({ messages: CONVERSATION.slice(0, 2), tools: [TOOL] });
    expect(turn).toEqual({
      kind: 'tool_calls',
      calls: [{ id: 'toolu_3', name: TOOL.name, arguments: { setpoint_c: 4 } }],
      usage: { inputTokens: 90, outputTokens: 30 },
      cacheKey: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(srv.requests[0]!.body.stream).toBeUndefined();
  });

  test('a 429 with retry-after is retried after that delay, then succeeds', async () => {
    srv.requests.length = 0;
    srv.reply(
      anError(429, 'rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit', {
        'retry-after': '1',
      }),
      anStream({ model: MODEL, pieces: ['ok'], usage: [10, 1] }),
    );
    const turn = await provider({ maxRetries: 2 }).next({ messages: CONVERSATION.slice(0, 2), tools: [] });
    expect(turn).toMatchObject({ kind: 'final', text: 'ok' });
    expect(srv.requests).toHaveLength(2);
    expect(srv.requests[1]!.at - srv.requests[0]!.at).toBeGreaterThanOrEqual(950);
  });

  test('401 → MHS.HOST.MODEL_AUTH; 529 → MHS.HOST.MODEL_UNAVAILABLE; long prompt → MODEL_CONTEXT_TOO_LONG', async () => {
    srv.reply(
      anError(401, 'authentication_error', 'invalid x-api-key'),
      anError(529, 'overloaded_error', 'Overloaded'),
      anError(400, 'invalid_request_error', 'prompt is too long: 210000 tokens > 200000 maximum'),
    );
    const auth = await failure(provider().next({ messages: CONVERSATION, tools: [TOOL] }));
    expect(auth.code).toBe(ErrorCode.HOST_MODEL_AUTH);
    expect(auth.details).toMatchObject({ provider: 'anthropic', status: 401, type: 'authentication_error' });
    expect((await failure(provider().next({ messages: CONVERSATION, tools: [] }))).code).toBe(
      ErrorCode.HOST_MODEL_UNAVAILABLE,
    );
    expect((await failure(provider().next({ messages: CONVERSATION, tools: [] }))).code).toBe(
      ErrorCode.HOST_MODEL_CONTEXT_TOO_LONG,
    );
  });

  test('an aborted signal → MHS.HOST.MODEL_ABORTED; a missing key → MHS.HOST.MODEL_CONFIG', async () => {
    const ac = new AbortController();
    ac.abort();
    const e = await failure(provider().next({ messages: CONVERSATION, tools: [], signal: ac.signal }));
    expect(e.code).toBe(ErrorCode.HOST_MODEL_ABORTED);
    expect(() => createModelProvider(parseModelSpec(`anthropic:${MODEL}`), {})).toThrow(
      expect.objectContaining({ code: ErrorCode.HOST_MODEL_CONFIG }),
    );
  });
});
