// Issue 19, forwarded requests: with real `mhs-host serve` processes on one real PostgreSQL store (a schema of its
// own; skipped without MHS_TEST_PG_URL), an interrupt answer, a variable write and a cancel sent to a process that does
// not drive the run are stored in `run_requests`, applied exactly once by the process that does (in the transaction of
// the events they append) and answered by the sender as a local request would be: an answer to an approval gate of a
// run B drives, sent to A, resolves it once with the caller as decider and A answers the resolved run; an answer at a
// node with no pending interrupt, sent to A, gets B's `not_found`; a variable write sent to A gets B's new bag. A cancel
// sent to A while B, the owner, is dead (SIGKILL) is stored, and applied by the process that takes the run over.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of HTTP responses are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDb } from '../../src/ledger/index.js';
import { PG_URL, postgresBackend } from '../ledger/helpers.js';
import type { StoreHandle } from '../ledger/helpers.js';
import { client, logProblems, makeToken, serve } from './serve-helpers.js';
import type { Served } from './serve-helpers.js';
import { chainNode as node, chainWorkflow as chain } from '../helpers/chain-workflow.js';

// Short leases: a dead owner's runs are taken over within seconds (the defaults are 15 s and 5 s).
const LEASE_ENV = { MHS_RUN_LEASE_TTL_MS: '3000', MHS_RUN_LEASE_SKEW_MS: '200' };

const gated = chain(
  'req-gate',
  [node('first', 0), node('gate', 1, 'core.approvalGate'), node('last', 2)],
  [{ name: 'note', type: 'string' }],
);
const slow = chain('req-slow', [
  node('first', 0),
  node('wait', 1, 'core.delay', { durationMs: 120_000 }),
  node('last', 2),
]);

interface RequestRow {
  request_id: string;
  kind: string;
  status: string;
  sender: string;
  applied_by: string | null;
}

describe.skipIf(!PG_URL)('requests sent to a process that does not drive the run', () => {
  let store: StoreHandle;
  let token = '';
  let a: Served;
  let b: Served;

  beforeAll(async () => {
    store = await postgresBackend.fresh();
    token = await makeToken(store.location, 'client');
    // One after another: the first creates the schema, the second finds it.
    a = await serve(store.location, ['--no-workflows', '--no-mhs', '--enable-test-seams'], LEASE_ENV);
    b = await serve(store.location, ['--no-workflows', '--no-mhs', '--enable-test-seams'], LEASE_ENV);
    // Registering a workflow is an operator action (issue 20); runs are started with the client token.
    const opToken = await makeToken(store.location, 'operator', 'req-op');
    for (const wf of [gated, slow]) expect((await client(b.url, opToken).post('/v1/workflows', wf)).status).toBe(201);
  }, 120_000);
  afterAll(async () => {
    for (const p of [a, b]) if (p && p.child.exitCode === null && p.child.signalCode === null) await p.stop();
    await store?.cleanup();
  });

  const ownerOf = async (runId: string): Promise<string | undefined> => {
    const hosts = (await client(a.url, token).get('/v1/operator/hosts')).body;
    return hosts.processes.find((h: any) => h.runs.some((r: any) => r.run_id === runId))?.owner;
  };
  const requestsOf = async (runId: string): Promise<RequestRow[]> => {
    const db = await openDb(store.location);
    try {
      return await db.all<RequestRow>(
        'SELECT request_id, kind, status, sender, applied_by FROM run_requests WHERE run_id = ? ORDER BY created_at',
        [runId],
      );
    } finally {
      await db.close();
    }
  };

  it('an interrupt answer and a variable write sent to A of a run B drives are applied once by B and answered by A', async () => {
    const runId = (await client(b.url, token).post('/v1/runs', { workflowId: gated.id })).body.runId as string;
    const bOwner = await ownerOf(runId);
    expect(bOwner).toMatch(new RegExp(`:${b.child.pid}$`));
    const api = client(a.url, token);
    await api.until(runId, (s) => s.status === 'waiting-approval');

    // A refusal is B's, raised again by A as a local request would raise it.
    const wrong = await api.post(`/v1/runs/${runId}/interrupts/first`, { action: 'accept' });
    expect(wrong.status).toBe(404);
    expect(wrong.body.error).toBe('not_found');

    const vars = await api.post(`/v1/host/sample/test/runs/${runId}/variables`, { variables: { note: 'from A' } });
    expect(vars.status).toBe(200);
    expect(vars.body.variables).toMatchObject({ note: 'from A' });

    const res = await api.post(`/v1/runs/${runId}/interrupts/gate`, { action: 'accept' });
    expect(res.status).toBe(200);
    // Answered once B committed the resolution (the request is settled in its transaction): no longer waiting.
    expect(res.body.status).not.toBe('waiting-approval');
    const done = await api.until(runId, (s) => ['completed', 'failed', 'cancelled'].includes(s.status));
    expect(done.status).toBe('completed');
    expect(done.variables).toMatchObject({ note: 'from A' });

    const log = await api.events(runId);
    expect(logProblems(log)).toEqual([]);
    const resolved = log.filter((e) => e.type === 'interrupt.resolved');
    expect(resolved).toHaveLength(1);
    expect(resolved[0]!.payload.decidedBy).not.toBe('system');
    expect(log.filter((e) => e.type === 'variable.changed' && e.payload.name === 'note')).toHaveLength(1);
    // Every request was stored by A and settled by B, the owner, exactly once.
    const rows = await requestsOf(runId);
    expect(rows.map((r) => [r.kind, r.status])).toEqual([
      ['interrupt', 'failed'],
      ['variables', 'applied'],
      ['interrupt', 'applied'],
    ]);
    for (const r of rows) expect([r.sender === bOwner, r.applied_by]).toEqual([false, bOwner]);
  }, 60_000);

  it('a cancel sent to A while the owner B is dead is applied by the process that takes the run over', async () => {
    const runId = (await client(b.url, token).post('/v1/runs', { workflowId: slow.id })).body.runId as string;
    expect(await ownerOf(runId)).toMatch(new RegExp(`:${b.child.pid}$`));
    const api = client(a.url, token);
    await api.until(runId, (s) => s.nodeStates?.wait?.status === 'running');
    await b.kill();
    // Stored at once; A answers after its bounded wait, whether or not it has taken the run over by then.
    const res = await api.post(`/v1/runs/${runId}/cancel`, { reason: 'owner is gone' });
    expect(res.status).toBeLessThan(300);
    const done = await api.until(runId, (s) => s.status === 'cancelled');
    expect(done.status).toBe('cancelled');

    const log = await api.events(runId);
    expect(logProblems(log)).toEqual([]);
    const resumedAt = log.findIndex((e) => e.type === 'run.resuming');
    expect(resumedAt).toBeGreaterThan(0);
    const last = log[log.length - 1]!;
    expect(last.type).toBe('run.cancelled');
    expect(last.payload.reason).toBe('owner is gone');
    expect(last.payload.cancelledBy).not.toBe('system');
    const rows = await requestsOf(runId);
    expect(rows.map((r) => [r.kind, r.status])).toEqual([['cancel', 'applied']]);
    expect(rows[0]!.applied_by).toMatch(new RegExp(`:${a.child.pid}$`));
  }, 60_000);
});
