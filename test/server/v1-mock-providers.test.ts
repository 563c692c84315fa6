// Guarantees (OpenWOP v1 run-options.md §"Mock provider extension", §"Canonical mock provider catalog"), over real
// HTTP against `mhs-host serve --enable-test-seams --model scripted:<script>` on SQLite and, when MHS_TEST_PG_URL is
// set, PostgreSQL:
// - discovery advertises exactly the four canonical mocks (`stream-text`, `tool-calls`, `error`, `usage-only`);
// - on `conformance-stream-text` (`core.ai.callPrompt`): `tool-calls` emits one `output.chunk` per call, in order,
//   each with that call in `meta.toolCalls` and the last `isLast` with `finishReason: tool_calls`; `usage-only` emits
//   one empty chunk whose `meta.usage` is the configured usage; `error` emits nothing and fails the run with the
//   configured code and message (RunSnapshot.error), `retryable` in its details, and a run cancelled during its
//   `failAfterMs` ends cancelled;
// - each provider's config is checked at run creation (400 validation_error, nothing runs);
// - the mock takes the place of the host model on the other AI paths ("ALL AI activity calls"): a `local.ai.envelope`
//   node (ctx.aiEnvelope) and a `core.orchestrator.supervisor` asking the model get the mock's answer, not the
//   script's, with its chunks and without `provider.usage`; under `error` each fails with the configured code; a
//   manifest agent dispatched by a mocked run (its child run inherits the mock) answers with the mock's result;
// - a replay fork of a mocked `core.ai.callPrompt` run re-executes it and reproduces its event log, chunks included; a branch fork's runOptionsOverlay
//   naming a mock is checked as a new run's is: 403 mock_provider_forbidden on a host without the test seams.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are read loosely in assertions */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STRICT, dispatchWorkflow, packsDir } from '../openwop/manifest-kit.js';
import { oneNode } from '../openwop/service-test-kit.js';
import { BACKENDS } from '../ledger/helpers.js';
import type { StoreHandle } from '../ledger/helpers.js';
import { client, makeToken, serve } from './serve-helpers.js';
import type { Served } from './serve-helpers.js';

const TERMINAL = (s: Record<string, any>): boolean => ['completed', 'failed', 'cancelled'].includes(s.status);
const SCRIPTED_NOTE = { type: 'vendor.mhs.note', payload: { text: 'from the script' } };
const MOCKED_NOTE = { type: 'vendor.mhs.note', payload: { text: 'from the mock' } };
const TERMINATE = { kind: 'terminate', reason: 'goal-reached', confidence: 0.95 };
const CALLS = [
  { id: 'call_1', name: 'lab.read_temperature', arguments: '{"sensor":"T1"}' },
  { id: 'call_2', name: 'lab.set_setpoint', arguments: '{"celsius":37}' },
];
const ERROR = {
  id: 'error',
  config: { code: 'mock_upstream_down', message: 'the mocked model is down', retryable: true },
};

function files(entries: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'mhs-mocks-'));
  for (const [name, v] of Object.entries(entries)) writeFileSync(join(dir, name), JSON.stringify(v));
  return dir;
}

/** `text` cut into tokens, so the mocked answer arrives as several chunks. */
function tokensOf(value: unknown): string[] {
  const text = JSON.stringify(value);
  return [text.slice(0, 10), text.slice(10, 20), text.slice(20)];
}

describe.each(BACKENDS)('the canonical mock providers on $name', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    h = await backend.fresh();
    const token = await makeToken(h.location, 'operator');
    const dir = files({
      'script.json': { model: 'lab-model', turns: [{ final: JSON.stringify(SCRIPTED_NOTE) }] },
      'envelopes.json': {
        'vendor.mhs.note': { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
      },
    });
    srv = await serve(h.location, [
      '--no-mhs',
      '--no-workflows',
      '--enable-test-seams',
      '--model',
      `scripted:${join(dir, 'script.json')}`,
      '--envelopes',
      join(dir, 'envelopes.json'),
      '--agent-packs',
      packsDir(),
    ]);
    api = client(srv.url, token);
    const envelope = oneNode('mock-envelope', {
      id: 'gen',
      name: 'gen',
      typeId: 'local.ai.envelope',
      config: { envelopeType: 'vendor.mhs.note', systemPrompt: 'Write a note.', userMessage: 'pumps' },
    });
    const supervisor = oneNode('mock-supervisor', {
      id: 'supervisor',
      name: 'supervisor',
      typeId: 'core.orchestrator.supervisor',
      config: { workers: ['worker-a'], systemPrompt: 'Goal: nothing left to do.' },
    });
    const dispatch = dispatchWorkflow('mock-dispatch', [STRICT], 'S-1');
    for (const wf of [envelope, supervisor, dispatch]) expect((await api.post('/v1/workflows', wf)).status).toBe(201);
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
  });

  async function runWith(workflowId: string, mockProvider?: unknown) {
    const created = await api.post('/v1/runs', {
      workflowId,
      ...(mockProvider ? { configurable: { mockProvider } } : {}),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const snap = await api.until(created.body.runId, TERMINAL);
    const log = await api.events(created.body.runId);
    return { snap, log, chunks: log.filter((e) => e.type === 'output.chunk').map((e) => e.payload as any) };
  }

  it('advertises exactly the four canonical mock providers', async () => {
    const doc = (await api.get('/.well-known/openwop')).body;
    expect(doc.testing.mockProviders).toEqual(['stream-text', 'tool-calls', 'error', 'usage-only']);
  });

  it('tool-calls: one chunk per call in order, meta.toolCalls each, the last isLast with finishReason tool_calls', async () => {
    const { snap, chunks } = await runWith('conformance-stream-text', {
      id: 'tool-calls',
      config: { toolCalls: CALLS, delayMsPerToken: 5 },
    });
    expect(snap.status).toBe('completed');
    expect(chunks.map((c) => [c.nodeId, c.chunk, c.isLast, c.meta.toolCalls])).toEqual([
      ['ai', '', false, [CALLS[0]]],
      ['ai', '', true, [CALLS[1]]],
    ]);
    expect(chunks[0].meta.finishReason).toBeUndefined();
    expect(chunks[1].meta.finishReason).toBe('tool_calls');
    expect(snap.nodeStates.ai.outputs.toolCalls).toEqual(CALLS);
  });

  it('usage-only: a single empty chunk carrying meta.usage; no content', async () => {
    const usage = { promptTokens: 120, completionTokens: 30, totalTokens: 150 };
    const { snap, chunks } = await runWith('conformance-stream-text', { id: 'usage-only', config: { usage } });
    expect(snap.status).toBe('completed');
    expect(chunks).toHaveLength(1);
    expect(chunks[0]).toMatchObject({ nodeId: 'ai', chunk: '', isLast: true, meta: { usage } });
    expect(snap.nodeStates.ai.outputs).toEqual({ text: '', usage });
  });

  it('error: no chunk; the run fails with the configured code and message', async () => {
    const { snap, chunks, log } = await runWith('conformance-stream-text', {
      ...ERROR,
      config: { ...ERROR.config, failAfterMs: 5 },
    });
    expect(chunks).toEqual([]);
    expect(snap.status).toBe('failed');
    expect(snap.error).toMatchObject({ code: 'mock_upstream_down', message: 'the mocked model is down' });
    const failed = log.find((e) => e.type === 'node.failed')!.payload as any;
    expect(failed.error.details).toEqual({ mockProvider: 'error', retryable: true });
  });

  it('error with failAfterMs: a run cancelled while the call waits to fail is cancelled, not failed', async () => {
    const created = await api.post('/v1/runs', {
      workflowId: 'conformance-stream-text',
      configurable: { mockProvider: { ...ERROR, config: { ...ERROR.config, failAfterMs: 600_000 } } },
    });
    const runId = created.body.runId as string;
    const waiting = await api.until(runId, (s) => s.nodeStates?.ai?.status === 'running' || TERMINAL(s));
    expect(waiting.status).toBe('running');
    expect((await api.post(`/v1/runs/${runId}/cancel`, { reason: 'mid-call' })).status).toBe(200);
    const snap = await api.until(runId, TERMINAL);
    expect(snap.status).toBe('cancelled');
    expect((await api.events(runId)).some((e) => e.type === 'node.failed')).toBe(false);
  });

  it('a config outside its provider’s fields is 400 validation_error and nothing runs', async () => {
    const before = (await api.get('/v1/runs')).body;
    for (const mockProvider of [
      { id: 'tool-calls', config: {} },
      { id: 'tool-calls', config: { toolCalls: [] } },
      { id: 'tool-calls', config: { toolCalls: [{ id: 'c', name: 'n', arguments: { a: 1 } }] } },
      { id: 'tool-calls', config: { toolCalls: [{ id: 'c', name: 'n', arguments: 'not json' }] } },
      { id: 'error', config: { message: 'no code' } },
      { id: 'error', config: { code: 'x', message: 'm', retryable: 'yes' } },
      { id: 'usage-only', config: {} },
      { id: 'usage-only', config: { usage: { promptTokens: 1 } } },
    ]) {
      const r = await api.post('/v1/runs', { workflowId: 'conformance-stream-text', configurable: { mockProvider } });
      expect([r.status, r.body.error], JSON.stringify(mockProvider)).toEqual([400, 'validation_error']);
    }
    expect((await api.get('/v1/runs')).body).toEqual(before);
  });

  it('ctx.aiEnvelope asks the mock, not the host model: the mocked envelope, its chunks, no provider.usage', async () => {
    const plain = await runWith('mock-envelope');
    expect(plain.snap.nodeStates.gen.outputs.payload).toEqual(SCRIPTED_NOTE.payload);
    expect(plain.log.some((e) => e.type === 'provider.usage')).toBe(true);

    const tokens = tokensOf(MOCKED_NOTE);
    const mocked = await runWith('mock-envelope', { id: 'stream-text', config: { tokens } });
    expect(mocked.snap.status).toBe('completed');
    expect(mocked.snap.nodeStates.gen.outputs.payload).toEqual(MOCKED_NOTE.payload);
    expect(mocked.chunks.map((c) => [c.nodeId, c.chunk])).toEqual(tokens.map((t) => ['gen', t]));
    expect(mocked.log.some((e) => e.type === 'provider.usage')).toBe(false);

    const failed = await runWith('mock-envelope', ERROR);
    expect(failed.snap.status).toBe('failed');
    expect(failed.snap.error.code).toBe('mock_upstream_down');
  });

  it('the supervisor asks the mock for its decision; under error it fails with the configured code', async () => {
    const mocked = await runWith('mock-supervisor', { id: 'stream-text', config: { tokens: tokensOf(TERMINATE) } });
    expect(mocked.snap.status).toBe('completed');
    expect(mocked.snap.nodeStates.supervisor.outputs.decision).toEqual(TERMINATE);
    expect(mocked.chunks.map((c) => c.nodeId)).toEqual(['supervisor', 'supervisor', 'supervisor']);

    const failed = await runWith('mock-supervisor', ERROR);
    expect(failed.snap.status).toBe('failed');
    expect(failed.snap.error.code).toBe('mock_upstream_down');
  });

  it('a dispatched manifest agent of a mocked run answers from the mock (the child run inherits it)', async () => {
    const child = async (snap: Record<string, any>) => {
      expect(snap.childRuns).toHaveLength(1);
      return api.until(snap.childRuns[0].runId, TERMINAL);
    };
    // The script's answer is not a verdict: the agent's return fails its handoff schema.
    const plain = await child((await runWith('mock-dispatch')).snap);
    expect(plain.status).toBe('failed');

    const mocked = await runWith('mock-dispatch', {
      id: 'stream-text',
      config: { tokens: ['{"verdict":', '"pass"}'] },
    });
    const worker = await child(mocked.snap);
    expect(worker.status).toBe('completed');
    expect(worker.variables.result).toEqual({ verdict: 'pass' });
    const chunks = (await api.events(worker.runId)).filter((e) => e.type === 'output.chunk');
    expect(chunks.map((e) => (e.payload as any).chunk)).toEqual(['{"verdict":', '"pass"}']);

    const failed = await child((await runWith('mock-dispatch', ERROR)).snap);
    expect([failed.status, failed.error.code]).toEqual(['failed', 'mock_upstream_down']);
  });

  it('a replay fork of a mocked core.ai.callPrompt run reproduces its event log, chunks included', async () => {
    const src = await runWith('conformance-stream-text', { id: 'tool-calls', config: { toolCalls: CALLS } });
    const r = await api.post(`/v1/runs/${src.snap.runId}:fork`, { mode: 'replay' });
    expect(r.status).toBe(201);
    await api.until(r.body.runId, TERMINAL);
    const shape = (log: any[]) =>
      log.map((e) => [e.type, e.nodeId ?? null, e.type === 'output.chunk' ? e.payload.meta : null]);
    expect(shape(await api.events(r.body.runId))).toEqual(shape(src.log));
  });
});

describe.each(BACKENDS)('mock providers in fork overlays without the test seams on $name', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    h = await backend.fresh();
    srv = await serve(h.location, ['--no-mhs', '--no-workflows']);
    api = client(srv.url, await makeToken(h.location, 'operator'));
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
  });

  it('a branch fork whose overlay names a mock is 403 mock_provider_forbidden and starts nothing', async () => {
    const created = await api.post('/v1/runs', { workflowId: 'conformance-noop' });
    await api.until(created.body.runId, TERMINAL);
    const before = (await api.get('/v1/runs')).body;
    const r = await api.post(`/v1/runs/${created.body.runId}:fork`, {
      mode: 'branch',
      fromSeq: 1,
      runOptionsOverlay: { configurable: { mockProvider: ERROR } },
    });
    expect([r.status, r.body.error]).toEqual([403, 'mock_provider_forbidden']);
    expect((await api.get('/v1/runs')).body).toEqual(before);
  });
});
