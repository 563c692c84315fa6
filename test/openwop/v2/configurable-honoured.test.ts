// Guarantees (OpenWOP v2 runs.md §"Run options" §"run section", RFC 0058; schemas/v2/configurable.schema.json), over
// real HTTP against `mhs-host serve` on SQLite and, when MHS_TEST_PG_URL is set, PostgreSQL, under OpenWOP-Version 2:
// - `run.runTimeoutMs`: a run still waiting when it passes is terminated `failed` with `run_timeout` after one
//   `cap.breached {kind: 'run-duration', limit}`; the same workflow without it keeps waiting;
// - `run.maxLoopIterations`: the orchestrator turn past it is not taken: `cap.breached {kind: 'loop-iterations',
//   limit, observed}` and the run fails `loop_limit_exceeded`; at a limit the loop stays within, it completes;
// - `ai.temperature` and `ai.maxTokens` reach the provider request (a local Chat Completions server records the body):
//   `temperature` as given, `max_tokens` as given; a run without them sends neither; a child run keeps them;
// and the snapshot's v2 `configurable` carries each honoured key as sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../../ledger/helpers.js';
import type { StoreHandle } from '../../ledger/helpers.js';
import { makeToken, serve } from '../../server/serve-helpers.js';
import type { Served } from '../../server/serve-helpers.js';
import { oaStream } from '../../helpers/openai-fixtures.js';
import { startWireServer } from '../../helpers/wire-server.js';
import type { WireServer } from '../../helpers/wire-server.js';
import { call, pollToEnd, waitForV2Status } from './v2-kit.js';

const V2 = { version: '2' };
const TERMINATE = { kind: 'terminate', reason: 'goal-reached', confidence: 0.95 };

describe.each(BACKENDS)('v2 configurable keys honoured on $name', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let token: string;
  const post = (body: unknown) => call(srv.url, 'POST', '/runs', { token, ...V2, body });
  const get = (runId: string) => call(srv.url, 'GET', `/runs/${encodeURIComponent(runId)}`, { token, ...V2 });

  beforeAll(async () => {
    h = await backend.fresh();
    token = await makeToken(h.location, 'client');
    srv = await serve(h.location, ['--openwop-v2']);
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
  });

  it('run.runTimeoutMs ends a run still waiting with run_timeout after cap.breached run-duration', async () => {
    const waiting = await post({ workflowId: 'conformance-approval', configurable: { version: 1 } });
    expect(waiting.status).toBe(201);
    await waitForV2Status(srv.url, waiting.body.eventsUrl, token, 'waiting-approval');

    const configurable = { version: 1, run: { runTimeoutMs: 300 } };
    const created = await post({ workflowId: 'conformance-approval', configurable });
    expect(created.status).toBe(201);
    const { events, last } = await pollToEnd(srv.url, created.body.eventsUrl, token);
    expect(last.status).toBe('failed');
    const breaches = events.filter((e) => e.type === 'cap.breached');
    expect(breaches.map((e) => e.payload)).toMatchObject([{ kind: 'run-duration', limit: 300 }]);
    const snap = await get(created.body.runId);
    expect(snap.body.error.code).toBe('run_timeout');
    expect(snap.body.configurable).toEqual(configurable);

    // The run without the key is still waiting (its workflow sets no timeout).
    expect((await get(waiting.body.runId)).body.status).toBe('waiting-approval');
    const cancelled = await call(srv.url, 'POST', `/runs/${encodeURIComponent(waiting.body.runId)}/cancel`, {
      token,
      ...V2,
      body: {},
    });
    expect(cancelled.status).toBe(200);
  });

  it('run.maxLoopIterations caps the orchestrator turns with loop_limit_exceeded', async () => {
    // conformance-dispatch-loop takes two supervisor turns (dispatch a worker, then terminate).
    const within = await post({
      workflowId: 'conformance-dispatch-loop',
      configurable: { version: 1, run: { maxLoopIterations: 2 } },
    });
    expect(within.status).toBe(201);
    const ok = await pollToEnd(srv.url, within.body.eventsUrl, token);
    expect(ok.last.status).toBe('completed');
    expect(ok.events.filter((e) => e.type === 'cap.breached')).toEqual([]);

    const configurable = { version: 1, run: { maxLoopIterations: 1 } };
    const capped = await post({ workflowId: 'conformance-dispatch-loop', configurable });
    const { events, last } = await pollToEnd(srv.url, capped.body.eventsUrl, token);
    expect(last.status).toBe('failed');
    const breaches = events.filter((e) => e.type === 'cap.breached');
    expect(breaches.map((e) => e.payload)).toMatchObject([
      { kind: 'loop-iterations', limit: 1, observed: 2, nodeId: 'orchestrator' },
    ]);
    // The turn past the limit asked for no decision: one agent.decided, the first turn's.
    expect(events.filter((e) => e.type === 'agent.decided')).toHaveLength(1);
    const snap = await get(capped.body.runId);
    expect(snap.body.error.code).toBe('loop_limit_exceeded');
    expect(snap.body.configurable).toEqual(configurable);
  });
});

describe.each(BACKENDS)('v2 ai.temperature and ai.maxTokens on the provider request on $name', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let wire: WireServer;
  let token: string;
  const post = (body: unknown) => call(srv.url, 'POST', '/runs', { token, ...V2, body });

  beforeAll(async () => {
    h = await backend.fresh();
    token = await makeToken(h.location, 'client');
    wire = await startWireServer();
    srv = await serve(
      h.location,
      ['--openwop-v2', '--model', 'openai-compatible:lab-llm', '--base-url', `${wire.url}/v1`, '--model-retries', '0'],
      { OPENAI_API_KEY: 'sk-v2-sampling-0123456789abcdef' },
    );
  });
  afterAll(async () => {
    await srv?.stop();
    await wire?.close();
    await h?.cleanup();
  });

  const decideOnce = async (configurable: Record<string, unknown>) => {
    wire.reply(oaStream({ model: 'lab-llm', pieces: [JSON.stringify(TERMINATE)], usage: [40, 12] }));
    const before = wire.requests.length;
    const created = await post({ workflowId: 'conformance-dispatch-loop', configurable });
    expect(created.status).toBe(201);
    const { last } = await pollToEnd(srv.url, created.body.eventsUrl, token);
    expect(last.status).toBe('completed');
    const sent = wire.requests.slice(before);
    expect(sent).toHaveLength(1);
    return { body: sent[0]!.body as Record<string, unknown>, runId: created.body.runId as string };
  };

  it('the run sets temperature and max_tokens of the call; without them neither is sent', async () => {
    const configurable = { version: 1, ai: { temperature: 0.3, maxTokens: 77 } };
    const set = await decideOnce(configurable);
    expect(set.body).toMatchObject({ model: 'lab-llm', temperature: 0.3, max_tokens: 77 });
    const snap = await call(srv.url, 'GET', `/runs/${encodeURIComponent(set.runId)}`, { token, ...V2 });
    expect(snap.body.configurable).toEqual(configurable);

    const plain = await decideOnce({ version: 1 });
    expect(plain.body.model).toBe('lab-llm');
    expect(plain.body).not.toHaveProperty('temperature');
    expect(plain.body).not.toHaveProperty('max_tokens');
  });

  it("a child run keeps its parent run's temperature and max_tokens on its own model calls", async () => {
    const operator = await makeToken(h.location, 'operator');
    const parent = {
      id: 'sampling-parent',
      name: 'sampling parent',
      version: '1',
      nodes: [
        {
          id: 'child',
          typeId: 'core.control.subWorkflow',
          name: 'child',
          position: { x: 0, y: 0 },
          config: { workflowId: 'conformance-dispatch-loop', waitForCompletion: true, onChildFailure: 'fail-parent' },
          inputs: {},
        },
      ],
      edges: [],
      triggers: [{ id: 'manual', type: 'manual' }],
      variables: [],
      metadata: {},
      settings: {},
    };
    const reg = await call(srv.url, 'POST', '/v1/workflows', { token: operator, body: parent });
    expect(reg.status).toBe(201);
    wire.reply(oaStream({ model: 'lab-llm', pieces: [JSON.stringify(TERMINATE)], usage: [40, 12] }));
    const before = wire.requests.length;
    const created = await post({
      workflowId: 'sampling-parent',
      configurable: { version: 1, ai: { temperature: 0, maxTokens: 55 } },
    });
    expect(created.status).toBe(201);
    const { last } = await pollToEnd(srv.url, created.body.eventsUrl, token);
    expect(last.status).toBe('completed');
    // The only model call is the child's orchestrator turn.
    const sent = wire.requests.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body).toMatchObject({ model: 'lab-llm', temperature: 0, max_tokens: 55 });
  });
});
