// Guarantees (OpenWOP v2 runs.md §"Run options", schemas/v2/configurable.schema.json), over real HTTP against
// `mhs-host serve` on SQLite and, when MHS_TEST_PG_URL is set, PostgreSQL, under OpenWOP-Version 2: `POST /runs`
// takes the closed, versioned `configurable`; an honoured key takes effect (`run.recursionLimit` breaches at its
// limit; the other honoured keys in configurable-honoured.test.ts) and the snapshot carries the `configurable` as sent; an unknown, dotted or unversioned key is 400
// validation_error, a declared key the host does not honour is refused with `details.field` (never accepted and
// ignored), `ai.credentialRef` is 403 credential_forbidden, `ai.mockProvider` without test keys 403
// mock_provider_forbidden, and no refused body creates a run; a v1 run's options read through v2 as a valid v2
// `configurable`; a branch fork takes a v2 `configurable` overlay.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../../ledger/helpers.js';
import type { StoreHandle } from '../../ledger/helpers.js';
import { makeToken, serve } from '../../server/serve-helpers.js';
import type { Served } from '../../server/serve-helpers.js';
import { call, pollToEnd, v2Problems } from './v2-kit.js';

const V2 = { version: '2' };

describe.each(BACKENDS)('v2 configurable on $name', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let token: string;
  const post = (body: unknown) => call(srv.url, 'POST', '/runs', { token, ...V2, body });
  const get = (runId: string) => call(srv.url, 'GET', `/runs/${encodeURIComponent(runId)}`, { token, ...V2 });
  const runCount = async () => {
    let n = 0;
    let cursor: string | undefined;
    do {
      const page = await call(srv.url, 'GET', `/runs${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`, {
        token,
        ...V2,
      });
      n += page.body.runs.length;
      cursor = page.body.nextCursor;
    } while (cursor);
    return n;
  };

  beforeAll(async () => {
    h = await backend.fresh();
    token = await makeToken(h.location, 'client');
    srv = await serve(h.location, ['--openwop-v2']);
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
  });

  it('run.recursionLimit is honoured and the snapshot carries the configurable as sent', async () => {
    const configurable = { version: 1, run: { recursionLimit: 3 }, extensions: { acme: { colour: 'red' } } };
    const created = await post({ workflowId: 'conformance-cap-breach', configurable });
    expect(created.status).toBe(201);
    const { events, last } = await pollToEnd(srv.url, created.body.eventsUrl, token);
    expect(last.status).toBe('failed');
    const breach = events.find((e) => e.type === 'cap.breached');
    expect(breach?.payload).toMatchObject({ kind: 'node-executions', limit: 3 });
    const snap = await get(created.body.runId);
    expect(snap.body.error.code).toBe('recursion_limit_exceeded');
    expect(snap.body.configurable).toEqual(configurable);
    expect(v2Problems('configurable', snap.body.configurable)).toEqual([]);
  });

  it('refuses what it does not honour, with the registry code, and creates no run', async () => {
    const before = await runCount();
    const cases: Array<[Record<string, unknown>, number, string, string?]> = [
      [{ run: { recursionLimit: 3 } }, 400, 'validation_error'], // no version
      [{ version: 2 }, 400, 'validation_error'],
      [{ version: 1, colour: 'red' }, 400, 'validation_error'],
      [{ version: 1, 'ai.provider': 'openai' }, 400, 'validation_error'],
      [{ version: 1, run: { depth: 3 } }, 400, 'validation_error'],
      [{ version: 1, run: { recursionLimit: 0 } }, 400, 'validation_error'],
      [{ version: 1, ai: { temperature: 3 } }, 400, 'validation_error'],
      [{ version: 1, run: { runTimeoutMs: 0 } }, 400, 'validation_error'],
      [
        { version: 1, run: { escalationThreshold: 1 } },
        400,
        'validation_error',
        'configurable.run.escalationThreshold',
      ],
      [{ version: 1, ai: { provider: 'openai' } }, 400, 'validation_error', 'configurable.ai.provider'],
      [
        { version: 1, ai: { reasoningVerbosity: 'full' } },
        400,
        'validation_error',
        'configurable.ai.reasoningVerbosity',
      ],
      [{ version: 1, budget: { maxTokens: 10 } }, 400, 'validation_error', 'configurable.budget.maxTokens'],
      [
        { version: 1, distillation: { tokenBudget: 10 } },
        400,
        'validation_error',
        'configurable.distillation.tokenBudget',
      ],
      [{ version: 1, ai: { credentialRef: 'cred-1' } }, 403, 'credential_forbidden', 'configurable.ai.credentialRef'],
      [{ version: 1, ai: { mockProvider: { id: 'stream-text' } } }, 403, 'mock_provider_forbidden'],
    ];
    for (const [configurable, status, code, field] of cases) {
      const r = await post({ workflowId: 'conformance-noop', configurable });
      expect([r.status, r.body.error], JSON.stringify(configurable)).toEqual([status, code]);
      expect(v2Problems('error-envelope', r.body)).toEqual([]);
      if (field) expect(r.body.details.field).toBe(field);
    }
    expect(await runCount()).toBe(before);
  });

  it("a v1 run's options read through v2 as a v2 configurable; keys with no v2 seat stay, under extensions", async () => {
    const v1 = await call(srv.url, 'POST', '/v1/runs', {
      token,
      body: { workflowId: 'conformance-noop', configurable: { recursionLimit: 50, shade: 'blue' } },
    });
    expect(v1.status).toBe(201);
    const snap = await get(v1.body.runId);
    expect(snap.status).toBe(200);
    expect(snap.body.configurable).toEqual({
      version: 1,
      run: { recursionLimit: 50 },
      extensions: { 'mhs-host': { shade: 'blue' } },
    });
    expect(v2Problems('configurable', snap.body.configurable)).toEqual([]);
  });

  it('a branch fork takes a v2 configurable overlay; a bad overlay is refused', async () => {
    const created = await post({ workflowId: 'conformance-cap-breach', configurable: { version: 1 } });
    const { last } = await pollToEnd(srv.url, created.body.eventsUrl, token);
    expect(last.status).toBe('completed');
    const fork = (configurable: unknown) =>
      call(srv.url, 'POST', `/runs/${encodeURIComponent(created.body.runId)}:fork`, {
        token,
        ...V2,
        body: { mode: 'branch', fromSeq: 1, runOptionsOverlay: { configurable } },
      });
    const bad = await fork({ version: 1, budget: { maxToolCalls: 5 } });
    expect([bad.status, bad.body.error, bad.body.details.field]).toEqual([
      400,
      'validation_error',
      'configurable.budget.maxToolCalls',
    ]);
    const unversioned = await fork({ run: { recursionLimit: 2 } });
    expect([unversioned.status, unversioned.body.error]).toEqual([400, 'validation_error']);
    const ok = await fork({ version: 1, run: { recursionLimit: 2 } });
    expect(ok.status).toBe(201);
    const forked = await pollToEnd(srv.url, ok.body.eventsUrl, token);
    expect(forked.last.status).toBe('failed');
    expect((await get(ok.body.runId)).body.configurable).toEqual({ version: 1, run: { recursionLimit: 2 } });
  });
});
