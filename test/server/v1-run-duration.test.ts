// Guarantees (RFC 0058; v1 run-options.md §Reserved keys `runTimeoutMs`, capabilities.md §"Engine-enforced limits";
// the public scenario run-execution-bounds-shape), over HTTP against a real `mhs-host serve` (SQLite file; PostgreSQL
// too when MHS_TEST_PG_URL is set):
// - discovery advertises `limits.maxRunDurationMs` (an integer >= 1000) and `conformance-run-duration-breach`, and
//   still validates against the vendored v1 capabilities schema;
// - `configurable.runTimeoutMs: 0` is refused 400 validation_error at create;
// - the fixture under `configurable.runTimeoutMs: 1000` ends failed / run_timeout after one
//   `cap.breached {kind: run-duration, limit: 1000, observed > limit}`, and its error names the bound that set the
//   deadline (issue 17: not always `settings.timeout`): `configurable.runTimeoutMs` here, `settings.timeout` for a
//   definition's own shorter timeout, `run.runTimeoutMs` for a v2 run; a v2 read of the v1 run shows the key in its
//   v2 seat;
// - under `serve --max-run-duration 1000` that ceiling is advertised, clamps a larger `runTimeoutMs` and bounds a run
//   that asks for none (`limits.maxRunDurationMs` named).
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of HTTP responses are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../ledger/helpers.js';
import type { StoreHandle } from '../ledger/helpers.js';
import { openwopSchemas, schemaId } from '../../src/openwop/schemas.js';
import { call, pollToEnd } from '../openwop/v2/v2-kit.js';
import { client, logProblems, makeToken, serve } from './serve-helpers.js';
import type { Served } from './serve-helpers.js';

const FIXTURE = 'conformance-run-duration-breach';
const terminal = (s: Record<string, any>) => ['completed', 'failed', 'cancelled'].includes(s.status as string);

/** A workflow whose own `settings.timeout` (1000 ms) is shorter than its delay. */
const TIMED = {
  id: 'h17-settings-timeout',
  name: 'settings.timeout bound',
  version: '1.0',
  nodes: [
    {
      id: 'wait',
      typeId: 'core.delay',
      name: 'Wait',
      position: { x: 0, y: 0 },
      config: { durationMs: 30000 },
      inputs: {},
    },
  ],
  edges: [],
  triggers: [{ id: 'manual', type: 'manual', enabled: true }],
  variables: [],
  metadata: {},
  settings: { timeout: 1000 },
};

/** Runs `body` to its end and returns the snapshot and the log. */
async function runToEnd(api: ReturnType<typeof client>, body: unknown) {
  const created = await api.post('/v1/runs', body);
  expect(created.status).toBe(201);
  const snap = await api.until(created.body.runId as string, terminal);
  return { runId: created.body.runId as string, snap, log: await api.events(created.body.runId as string) };
}

function breaches(log: Array<{ type: string; payload?: any }>) {
  return log.filter((e) => e.type === 'cap.breached').map((e) => e.payload as Record<string, any>);
}

describe.each(BACKENDS)('v1 configurable.runTimeoutMs and limits.maxRunDurationMs ($name)', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let token: string;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    h = await backend.fresh();
    token = await makeToken(h.location, 'client');
    srv = await serve(h.location, ['--no-workflows']);
    api = client(srv.url, token);
  }, 120_000);

  afterAll(async () => {
    expect(await srv.stop()).toBe(0);
    await h.cleanup();
  });

  it('discovery advertises the ceiling and the fixture, and validates', async () => {
    const doc = (await api.get('/.well-known/openwop')).body;
    expect(Number.isInteger(doc.limits.maxRunDurationMs)).toBe(true);
    expect(doc.limits.maxRunDurationMs).toBeGreaterThanOrEqual(1000);
    expect(doc.fixtures).toContain(FIXTURE);
    expect(openwopSchemas().check(schemaId('capabilities'), doc)).toEqual([]);
  });

  it('runTimeoutMs: 0 is refused at create', async () => {
    const res = await api.post('/v1/runs', { workflowId: FIXTURE, configurable: { runTimeoutMs: 0 } });
    expect([res.status, res.body.error]).toEqual([400, 'validation_error']);
  });

  it('the fixture under runTimeoutMs 1000 fails run_timeout after cap.breached run-duration', async () => {
    const { runId, snap, log } = await runToEnd(api, { workflowId: FIXTURE, configurable: { runTimeoutMs: 1000 } });
    expect(snap.status).toBe('failed');
    expect(snap.error.code).toBe('run_timeout');
    expect(snap.error.details).toMatchObject({ source: 'configurable.runTimeoutMs', limit: 1000 });
    const [breach, ...more] = breaches(log);
    expect(more).toEqual([]);
    expect(breach).toMatchObject({ kind: 'run-duration', limit: 1000 });
    expect(breach!.observed).toBeGreaterThan(breach!.limit);
    expect(logProblems(log)).toEqual([]);
    // The v2 read of the v1 run carries the honoured key in its v2 seat.
    const v2 = await call(srv.url, 'GET', `/runs/${runId}`, { token, version: '2' });
    expect(v2.body.configurable).toMatchObject({ version: 1, run: { runTimeoutMs: 1000 } });
  });

  it("a definition's shorter settings.timeout names itself", async () => {
    const operator = await makeToken(h.location, 'operator', 'op-h17');
    const registered = await client(srv.url, operator).post('/v1/workflows', TIMED);
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    const { snap, log } = await runToEnd(api, { workflowId: TIMED.id, configurable: { runTimeoutMs: 20000 } });
    expect(snap.error).toMatchObject({ code: 'run_timeout', details: { source: 'settings.timeout', limit: 1000 } });
    expect(breaches(log)).toMatchObject([{ kind: 'run-duration', limit: 1000 }]);
  });

  it('a v2 run names run.runTimeoutMs', async () => {
    const created = await call(srv.url, 'POST', '/runs', {
      token,
      version: '2',
      body: { workflowId: FIXTURE, configurable: { version: 1, run: { runTimeoutMs: 1000 } } },
    });
    expect(created.status).toBe(201);
    await pollToEnd(srv.url, created.body.eventsUrl as string, token);
    const snap = (
      await call(srv.url, 'GET', `/runs/${encodeURIComponent(created.body.runId as string)}`, { token, version: '2' })
    ).body;
    expect(snap.error).toMatchObject({ code: 'run_timeout', details: { source: 'run.runTimeoutMs', limit: 1000 } });
  });
});

describe.each(BACKENDS)('serve --max-run-duration bounds every run ($name)', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    h = await backend.fresh();
    const token = await makeToken(h.location, 'client');
    srv = await serve(h.location, ['--no-workflows', '--max-run-duration', '1000']);
    api = client(srv.url, token);
  }, 120_000);

  afterAll(async () => {
    expect(await srv.stop()).toBe(0);
    await h.cleanup();
  });

  it('advertises the ceiling, clamps a larger runTimeoutMs to it and bounds a run that asks for none', async () => {
    const doc = (await api.get('/.well-known/openwop')).body;
    expect(doc.limits.maxRunDurationMs).toBe(1000);
    expect(openwopSchemas().check(schemaId('capabilities'), doc)).toEqual([]);
    for (const configurable of [{ runTimeoutMs: 20000 }, {}]) {
      const { snap, log } = await runToEnd(api, { workflowId: FIXTURE, configurable });
      expect(snap.error).toMatchObject({
        code: 'run_timeout',
        details: { source: 'limits.maxRunDurationMs', limit: 1000 },
      });
      expect(breaches(log)).toMatchObject([{ kind: 'run-duration', limit: 1000 }]);
    }
  });
});
