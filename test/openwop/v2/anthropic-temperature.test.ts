// Guarantees (issue 17; the Anthropic Messages API takes `temperature` 0..1, OpenAI Chat Completions 0..2, the v2
// `configurable.ai.temperature` 0..2), over real HTTP against `mhs-host serve --model anthropic:…` (the Messages API
// played by a local wire server) on SQLite and, when MHS_TEST_PG_URL is set, PostgreSQL, under OpenWOP-Version 2:
// - a run whose `ai.temperature` is above 1 is refused at create: 400 `validation_error` with `details.field`
//   `configurable.ai.temperature`, the provider and its maximum; no run is created and no model request is made;
//   a branch fork whose overlay asks for it is refused the same way;
// - at 1 the run is created and its model call carries `temperature: 1`;
// - a run whose `ai.model` names another provider (`openai-compatible:…`, 0..2) keeps 1.5.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../../ledger/helpers.js';
import type { StoreHandle } from '../../ledger/helpers.js';
import { makeToken, serve } from '../../server/serve-helpers.js';
import type { Served } from '../../server/serve-helpers.js';
import { anStream } from '../../helpers/anthropic-fixtures.js';
import { startWireServer } from '../../helpers/wire-server.js';
import type { WireServer } from '../../helpers/wire-server.js';
import { call, pollToEnd } from './v2-kit.js';

const V2 = { version: '2' };
const MODEL = 'claude-lab';
const TERMINATE = { kind: 'terminate', reason: 'goal-reached', confidence: 0.95 };

describe.each(BACKENDS)('ai.temperature above the Anthropic range is refused at create on $name', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let wire: WireServer;
  let token: string;
  const post = (path: string, body: unknown) => call(srv.url, 'POST', path, { token, ...V2, body });
  const runCount = async () => (await call(srv.url, 'GET', '/runs', { token, ...V2 })).body.runs.length as number;

  beforeAll(async () => {
    h = await backend.fresh();
    token = await makeToken(h.location, 'client');
    wire = await startWireServer();
    srv = await serve(
      h.location,
      ['--no-workflows', '--model', `anthropic:${MODEL}`, '--base-url', wire.url, '--model-retries', '0'],
      { ANTHROPIC_API_KEY: 'sk-ant-temperature-0123456789abcdef' },
    );
  });
  afterAll(async () => {
    await srv?.stop();
    await wire?.close();
    await h?.cleanup();
  });

  it('1.5 is refused with the field, provider and maximum; nothing is created or asked', async () => {
    const before = await runCount();
    const refused = await post('/runs', {
      workflowId: 'conformance-dispatch-loop',
      configurable: { version: 1, ai: { temperature: 1.5 } },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('validation_error');
    expect(refused.body.details).toMatchObject({
      field: 'configurable.ai.temperature',
      provider: 'anthropic',
      maximum: 1,
      value: 1.5,
    });
    expect(await runCount()).toBe(before);
    expect(wire.requests).toHaveLength(0);
  });

  it('1 is accepted and sent; a branch fork asking 1.5 is refused', async () => {
    wire.reply(anStream({ model: MODEL, pieces: [JSON.stringify(TERMINATE)], usage: [40, 12] }));
    const created = await post('/runs', {
      workflowId: 'conformance-dispatch-loop',
      configurable: { version: 1, ai: { temperature: 1 } },
    });
    expect(created.status).toBe(201);
    const { last } = await pollToEnd(srv.url, created.body.eventsUrl, token);
    expect(last.status).toBe('completed');
    expect(wire.requests).toHaveLength(1);
    expect(wire.requests[0]!.body).toMatchObject({ model: MODEL, temperature: 1 });

    const before = await runCount();
    const fork = await post(`/runs/${encodeURIComponent(created.body.runId as string)}:fork`, {
      mode: 'branch',
      fromSeq: 0,
      runOptionsOverlay: { configurable: { version: 1, ai: { temperature: 1.5 } } },
    });
    expect([fork.status, fork.body.error, fork.body.details?.field]).toEqual([
      400,
      'validation_error',
      'configurable.ai.temperature',
    ]);
    expect(await runCount()).toBe(before);
  });

  it('a run whose ai.model names an OpenAI-compatible model keeps 1.5', async () => {
    const created = await post('/runs', {
      workflowId: 'conformance-noop',
      configurable: { version: 1, ai: { model: 'openai-compatible:lab-llm', temperature: 1.5 } },
    });
    expect(created.status).toBe(201);
    expect((await pollToEnd(srv.url, created.body.eventsUrl, token)).last.status).toBe('completed');
  });
});
