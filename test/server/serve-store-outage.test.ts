// Guarantees (issue 16, Supervision; HOST-093): while another connection holds the write lock of the SQLite file
// under a running `mhs-host serve`, the process stays up, refuses new runs with MHS.HOST.LEDGER_UNAVAILABLE (503),
// keeps answering reads and the operator API (`GET /v1/operator/ledger` reports the store unavailable), logs the
// outage with its code, and when the lock is released it recovers by itself: the run that was in flight completes
// with a gap-free event log (nothing lost) and new runs are accepted again. Real processes, a real SQLite file.
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/core/index.js';
import { capabilityToolName } from '../../src/mhs/tool-names.js';
import { call, gatewayHttp } from '../gateway/gateway-helpers.js';
import { startMhsHost } from '../helpers/mhs-host.js';
import type { MhsHost } from '../helpers/mhs-host.js';
import { client, logProblems, serve } from './serve-helpers.js';
import type { Served } from './serve-helpers.js';

let host: MhsHost<'thermo'>;
let srv: Served | undefined;
let locker: Database.Database | undefined;

const wf = {
  id: 'outage-delay',
  name: 'outage-delay',
  version: '1',
  nodes: [
    {
      id: 'wait',
      typeId: 'core.delay',
      name: 'wait',
      position: { x: 0, y: 0 },
      config: { durationMs: 2_000 },
      inputs: {},
    },
    { id: 'after', typeId: 'core.noop', name: 'after', position: { x: 1, y: 0 }, config: {}, inputs: {} },
  ],
  edges: [{ id: 'e0', sourceNodeId: 'wait', targetNodeId: 'after' }],
  triggers: [{ id: 'manual', type: 'manual' }],
  variables: [],
  metadata: {},
  settings: {},
};

beforeAll(async () => {
  host = await startMhsHost({
    prefix: 'outage',
    sims: { thermo: ['thermostat'] },
    tokens: { op: 'operator', bot: 'agent' },
    serve: false,
  });
  // serve's own short busy timeout (500 ms): better-sqlite3 waits synchronously, a locked write must not block HTTP.
  srv = await serve(host.dbPath, ['--no-workflows']);
}, 120_000);

afterAll(async () => {
  if (locker?.inTransaction) locker.exec('ROLLBACK');
  locker?.close();
  await srv?.stop();
  await host?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a store locked under a running serve', () => {
  it('keeps the process up, refuses new runs with LEDGER_UNAVAILABLE, serves reads, and recovers with nothing lost', async () => {
    const api = client(srv!.url, host.tokens.op!);
    expect((await api.post('/v1/workflows', wf)).status).toBe(201);
    const { runId } = (await api.post('/v1/runs', { workflowId: 'outage-delay' })).body as { runId: string };
    await api.until(runId, (s) => s.status === 'running');

    locker = new Database(host.dbPath);
    locker.exec('BEGIN IMMEDIATE'); // another writer holds the file
    const refused = await api.post('/v1/runs', { workflowId: 'outage-delay' });
    expect(refused.status).toBe(503);
    expect(refused.body.error).toBe(ErrorCode.HOST_LEDGER_UNAVAILABLE);

    const ledger = await api.get('/v1/operator/ledger?limit=1');
    expect(ledger.status).toBe(200);
    expect(ledger.body.status).toMatchObject({
      state: 'unavailable',
      last_error: { code: ErrorCode.HOST_LEDGER_UNAVAILABLE },
    });
    expect((await api.get(`/v1/runs/${runId}`)).status).toBe(200);
    expect((await api.get('/v1/operator/endpoints')).status).toBe(200);
    // A new command (the MCP gateway's governed call) is refused with the code, nothing sent.
    const agent = await gatewayHttp(srv!.url, host.tokens.bot, '2026-07-28');
    const setpoint = capabilityToolName('thermostat', 'cap.thermal.setpoint.v1');
    try {
      const r = await call(agent, setpoint, { setpoint_c: 31 });
      expect(r.isError).toBe(true);
      expect(r.text).toContain(ErrorCode.HOST_LEDGER_UNAVAILABLE);
    } finally {
      await agent.close();
    }

    await sleep(3_000); // the delay node finishes while the store is locked: its events must wait, not be lost
    expect(srv!.child.exitCode).toBeNull();
    expect((await api.get(`/v1/runs/${runId}`)).body.status).toBe('running');
    locker.exec('ROLLBACK');
    locker.close();
    locker = undefined;

    const snap = await api.until(runId, (s) => ['completed', 'failed', 'cancelled'].includes(s.status));
    expect(snap.status).toBe('completed');
    expect(logProblems(await api.events(runId))).toEqual([]);
    const deadline = Date.now() + 30_000;
    while ((await api.get('/v1/operator/ledger?limit=1')).body.status?.state !== 'available' && Date.now() < deadline)
      await sleep(250);
    expect((await api.get('/v1/operator/ledger?limit=1')).body.status.state).toBe('available');
    expect((await api.post('/v1/runs', { workflowId: 'outage-delay' })).status).toBe(201);
    const again = await gatewayHttp(srv!.url, host.tokens.bot, '2026-07-28');
    try {
      const r = await call(again, capabilityToolName('thermostat', 'cap.thermal.setpoint.v1'), { setpoint_c: 32 });
      expect(r.body.receipt?.status, r.text).toBe('completed');
    } finally {
      await again.close();
    }

    expect((await api.post('/v1/operator/ledger/verify')).body).toMatchObject({ ok: true });
    expect(srv!.child.exitCode).toBeNull();
    const lines = srv!
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.some((l) => l.code === ErrorCode.HOST_LEDGER_UNAVAILABLE)).toBe(true);
    expect(lines.filter((l) => l.last_resort)).toEqual([]); // every failure had an owner
  }, 120_000);
});
