// Issue 19, new runs spread over the live processes: with three real `mhs-host serve` processes on one real PostgreSQL
// store (a schema of its own; skipped without MHS_TEST_PG_URL), runs all started through A are not all driven by A:
// once A holds more than one run more than the least loaded live process, A inserts the next run with that process's
// lease and notifies it, and it starts the run. Every run is held by exactly one process, and all complete exactly once.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of HTTP responses are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_URL, postgresBackend } from '../ledger/helpers.js';
import type { StoreHandle } from '../ledger/helpers.js';
import { client, logProblems, makeToken, serve } from './serve-helpers.js';
import type { Served } from './serve-helpers.js';
import { chainNode, chainWorkflow } from '../helpers/chain-workflow.js';

const RUNS = 9;
const wf = chainWorkflow('spread', [
  chainNode('first', 0),
  chainNode('wait', 1, 'core.delay', { durationMs: 4000 }),
  chainNode('last', 2),
]);

describe.skipIf(!PG_URL)('new runs spread over the live processes', () => {
  let store: StoreHandle;
  let token = '';
  const procs: Served[] = [];

  beforeAll(async () => {
    store = await postgresBackend.fresh();
    token = await makeToken(store.location, 'client');
    for (let i = 0; i < 3; i++) procs.push(await serve(store.location, ['--no-workflows', '--no-mhs']));
    // Registering a workflow is an operator action (issue 20); runs are started with the client token.
    const opToken = await makeToken(store.location, 'operator', 'spread-op');
    expect((await client(procs[0]!.url, opToken).post('/v1/workflows', wf)).status).toBe(201);
  }, 120_000);
  afterAll(async () => {
    for (const p of procs) await p.stop();
    await store?.cleanup();
  });

  it('runs started through one process are driven by all three, each by exactly one, and complete once', async () => {
    const api = client(procs[0]!.url, token);
    const runIds: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const res = await api.post('/v1/runs', { workflowId: wf.id });
      expect(res.status).toBe(201);
      // Answered once the run started, wherever it is driven.
      expect(res.body.status).toBe('running');
      runIds.push(res.body.runId as string);
    }
    const hosts = (await api.get('/v1/operator/hosts')).body;
    const holders = new Map<string, string[]>();
    for (const h of hosts.processes as any[])
      for (const r of h.runs as any[]) holders.set(r.run_id, [...(holders.get(r.run_id) ?? []), h.owner]);
    // Every run that is still running is held by exactly one process, and every process holds some.
    for (const id of runIds) expect((holders.get(id) ?? ['ended']).length).toBe(1);
    const owners = new Set([...holders.values()].flat());
    for (const p of procs) expect([...owners].some((o) => o.endsWith(`:${p.child.pid}`))).toBe(true);

    for (const id of runIds) {
      const done = await api.until(id, (s) => ['completed', 'failed', 'cancelled'].includes(s.status));
      expect(done.status).toBe('completed');
      const log = await api.events(id);
      expect(logProblems(log)).toEqual([]);
      expect(log.filter((e) => e.type === 'run.started')).toHaveLength(1);
      expect(log.filter((e) => e.type === 'run.resuming')).toHaveLength(0);
    }
  }, 120_000);
});
