// Guarantees (OpenWOP v1 stream-modes.md, run-options.md §"Mock provider extension", fixtures.md
// §conformance-stream-text), over real HTTP against `mhs-host serve` on SQLite and, when MHS_TEST_PG_URL is set,
// PostgreSQL:
// - `GET /v1/runs/{runId}/events` as SSE defaults to `updates`; `values` streams `state.snapshot` frames whose last
//   is the run as `GET /v1/runs/{runId}` shows it; unknown or mixed-with-values modes are 400 unsupported_stream_mode
//   with details.supported naming the four modes, before the content shape is chosen;
// - with the test seams on, `testing.mockProviders` lists `stream-text` (with the other canonical mocks, see
//   v1-mock-providers.test.ts) and `conformance-stream-text` is advertised;
//   a run of it with the stream-text mock streams each token as an `ai.message.chunk` frame in `messages` mode, in
//   token order, the last `isLast` with `meta.finishReason` and `meta.usage`, and the stream ends on the terminal
//   event; `updates,messages` carries the chunks (`event: messages`) and the transitions (`event: updates`); the v2 stream of the same run carries the same
//   chunks; an unknown mock is 400 unsupported_mock_provider and a malformed config 400 validation_error;
// - with the test seams off, a mock provider is 403 mock_provider_forbidden and neither the fixture nor
//   `testing.mockProviders` is advertised.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updatesTier } from '../helpers/stream-modes.js';
import { BACKENDS } from '../ledger/helpers.js';
import type { StoreHandle } from '../ledger/helpers.js';
import { client, makeToken, readSse, serve } from './serve-helpers.js';
import type { Served } from './serve-helpers.js';

const TOKENS = ['Hello', ' ', 'world', '!'];
const MOCK = {
  id: 'stream-text',
  config: {
    tokens: TOKENS,
    delayMsPerToken: 10,
    finishReason: 'stop',
    usage: { promptTokens: 5, completionTokens: 4, totalTokens: 9 },
  },
};
const TERMINAL = (s: Record<string, any>): boolean => ['completed', 'failed', 'cancelled'].includes(s.status);

describe.each(BACKENDS)('v1 stream modes and the stream-text mock on $name', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let token: string;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    h = await backend.fresh();
    token = await makeToken(h.location, 'operator');
    srv = await serve(h.location, ['--no-workflows', '--enable-test-seams']);
    api = client(srv.url, token);
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
  });

  it('the default SSE mode is updates; values ends on the snapshot GET shows; bad modes are 400 before anything else', async () => {
    const { body } = await api.post('/v1/runs', { workflowId: 'conformance-multi-node' });
    await api.until(body.runId, TERMINAL);
    const log = await api.events(body.runId);
    const plain = await readSse(`${srv.url}/v1/runs/${body.runId}/events`, token);
    expect(plain.events).toEqual(log.filter((e) => updatesTier(e.type)));
    expect(plain.names).toEqual(plain.events.map((e) => e.type));
    const values = await readSse(`${srv.url}/v1/runs/${body.runId}/events?streamMode=values`, token);
    expect(new Set(values.names)).toEqual(new Set(['state.snapshot']));
    expect(values.ids).toEqual(plain.ids);
    expect(values.events.at(-1)).toEqual((await api.get(`/v1/runs/${body.runId}`)).body);
    expect((values.events[0] as any).status).toBe('running');
    for (const mode of ['bogus', 'values,updates', 'updates,']) {
      for (const accept of ['text/event-stream', 'application/json']) {
        const r = await fetch(`${srv.url}/v1/runs/${body.runId}/events?streamMode=${encodeURIComponent(mode)}`, {
          headers: { authorization: `Bearer ${token}`, accept },
        });
        const err = (await r.json()) as any;
        expect([r.status, err.error], `${mode} ${accept}`).toEqual([400, 'unsupported_stream_mode']);
        expect([...err.details.supported].sort()).toEqual(['debug', 'messages', 'updates', 'values']);
      }
    }
  });

  it('advertises the stream-text mock and the fixture that needs it', async () => {
    const doc = (await api.get('/.well-known/openwop')).body;
    expect(doc.testing.mockProviders).toContain('stream-text');
    expect(doc.fixtures).toContain('conformance-stream-text');
  });

  it('messages: the mocked tokens as ai.message.chunk frames in order, the last with isLast and meta; the run completes', async () => {
    const created = await api.post('/v1/runs', {
      workflowId: 'conformance-stream-text',
      configurable: { mockProvider: MOCK },
    });
    expect(created.status).toBe(201);
    const runId = created.body.runId as string;
    // Opened while the run streams (10 ms between tokens): live frames, then the server closes on the terminal event.
    const s = await readSse(`${srv.url}/v1/runs/${runId}/events?streamMode=messages`, token);
    expect(s.status).toBe(200);
    const chunks = s.events.filter((_, i) => s.names[i] === 'ai.message.chunk') as any[];
    expect(chunks.map((c) => c.chunk)).toEqual(TOKENS);
    for (const c of chunks) {
      expect(c.nodeId).toBe('ai');
      expect(c.runId).toBe(runId);
      expect(typeof c.isLast).toBe('boolean');
    }
    expect(chunks.map((c) => c.isLast)).toEqual([false, false, false, true]);
    expect(chunks.at(-1).meta).toMatchObject({ finishReason: 'stop', usage: { completionTokens: 4 } });
    expect(s.names.at(-1)).toBe('run.completed');
    const snap = await api.until(runId, TERMINAL);
    expect(snap.status).toBe('completed');
    expect(snap.nodeStates.ai.outputs.text).toBe('Hello world!');
    // The chunks are events of the durable log (output.chunk), so a later reader sees the same.
    const again = await readSse(`${srv.url}/v1/runs/${runId}/events?streamMode=updates,messages`, token);
    const log = await api.events(runId);
    expect(again.names.filter((n) => n === 'messages').length).toBe(TOKENS.length);
    // Mixed: each frame names the mode that admitted it and carries the event itself.
    expect(again.events).toEqual(log.filter((e) => updatesTier(e.type) || e.type === 'output.chunk'));
    const v2 = await fetch(`${srv.url}/runs/local~2F${runId.replace('_', '-')}/events?streamMode=messages`, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', 'openwop-version': '2' },
    });
    const text = await v2.text();
    const v2chunks = [...text.matchAll(/^event: ai\.message\.chunk\ndata: (.*)$/gm)].map((m) => JSON.parse(m[1]!));
    expect(v2chunks.map((c) => c.chunk)).toEqual(TOKENS);
  });

  it('an unknown mock provider is 400 unsupported_mock_provider; a malformed config is 400 validation_error; nothing runs', async () => {
    const before = (await api.get('/v1/runs')).body;
    const unknown = await api.post('/v1/runs', {
      workflowId: 'conformance-stream-text',
      configurable: { mockProvider: { id: 'does-not-exist' } },
    });
    expect([unknown.status, unknown.body.error]).toEqual([400, 'unsupported_mock_provider']);
    expect(unknown.body.details).toEqual({
      requestedProvider: 'does-not-exist',
      supportedProviders: ['stream-text', 'tool-calls', 'error', 'usage-only'],
    });
    for (const mockProvider of [
      { id: 'stream-text', config: { tokens: 'Hello' } },
      { id: 'stream-text', config: { delayMsPerToken: 5001 } },
      { id: 'stream-text', config: { finishReason: 'done' } },
      { config: {} },
    ]) {
      const r = await api.post('/v1/runs', { workflowId: 'conformance-stream-text', configurable: { mockProvider } });
      expect([r.status, r.body.error], JSON.stringify(mockProvider)).toEqual([400, 'validation_error']);
    }
    expect((await api.get('/v1/runs')).body).toEqual(before);
  });
});

describe.each(BACKENDS)('mock providers without the test seams on $name', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    h = await backend.fresh();
    const token = await makeToken(h.location, 'operator');
    srv = await serve(h.location, ['--no-workflows']);
    api = client(srv.url, token);
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
  });

  it('a mock provider is 403 mock_provider_forbidden; neither the mock nor its fixture is advertised', async () => {
    const r = await api.post('/v1/runs', { workflowId: 'conformance-noop', configurable: { mockProvider: MOCK } });
    expect([r.status, r.body.error]).toEqual([403, 'mock_provider_forbidden']);
    expect(r.body.details.requestedProvider).toBe('stream-text');
    const doc = (await api.get('/.well-known/openwop')).body;
    expect(doc.testing?.mockProviders).toBeUndefined();
    expect(doc.fixtures).not.toContain('conformance-stream-text');
  });
});
