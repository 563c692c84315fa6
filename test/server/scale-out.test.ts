// Guarantees (issue 19), with real `mhs-host serve` processes on one real PostgreSQL store (a schema of its own;
// skipped without MHS_TEST_PG_URL): runs started through every process are each driven by the one process holding
// their lease. When one process is SIGKILLed mid-way, the others take its runs over and resume them from their logs:
// every run completes exactly once (one node.started and one node.completed per node, one terminal event, last),
// and every log is gap-free and schema-valid. A process paused with SIGSTOP until its leases lapsed loses its runs to
// another process; after SIGCONT it writes nothing more to them (the fence refuses it, or its renewal tells it
// first, and it reports MHS.HOST.RUN_LEASE_LOST) and the runs complete on the process that took them over.
// `GET /v1/operator/hosts` (and `mhs-host hosts`) lists the processes and the runs each holds.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of HTTP responses are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/openwop/types.js';
import { PG_URL, postgresBackend } from '../ledger/helpers.js';
import type { StoreHandle } from '../ledger/helpers.js';
import { spawnSync } from 'node:child_process';
import { cliEntry } from '../helpers/cli-entry.js';
import { ROOT, client, logProblems, makeToken, serve } from './serve-helpers.js';
import type { Served } from './serve-helpers.js';
import { delayChain } from '../helpers/chain-workflow.js';

// Short leases keep the takeovers within seconds; the defaults are 15 s and 5 s.
const LEASE_ENV = { MHS_RUN_LEASE_TTL_MS: '1500', MHS_RUN_LEASE_SKEW_MS: '200' };
const RUNS = 21;

const workflow = (id: string, delayMs: number) => delayChain(id, delayMs);
const NODES = ['first', 'wait1', 'mid', 'wait2', 'last'];
const TERMINAL = ['completed', 'failed', 'cancelled'];

/** Problems of one run's log beyond `logProblems`: every node started and completed exactly once. */
function duplicateProblems(events: RunEvent[]): string[] {
  const out: string[] = [];
  for (const id of NODES)
    for (const type of ['node.started', 'node.completed']) {
      const n = events.filter((e) => e.type === type && e.nodeId === id).length;
      if (n !== 1) out.push(`${type} ${id} x${n}`);
    }
  return out;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!PG_URL)('several serve processes on one PostgreSQL store', () => {
  let store: StoreHandle;
  let token = '';
  const procs: Served[] = [];

  beforeAll(async () => {
    store = await postgresBackend.fresh();
    token = await makeToken(store.location, 'client');
    // One after another: the first creates the schema, the others find it.
    for (let i = 0; i < 3; i++) procs.push(await serve(store.location, ['--no-workflows', '--no-mhs'], LEASE_ENV));
    const api = client(procs[0]!.url, await makeToken(store.location, 'operator', 'scale-op'));
    expect((await api.post('/v1/workflows', workflow('scale-delay', 1200))).status).toBe(201);
    expect((await api.post('/v1/workflows', workflow('scale-pause', 2500))).status).toBe(201);
  }, 120_000);
  afterAll(async () => {
    for (const p of procs) {
      if (p.child.exitCode !== null || p.child.signalCode !== null) continue;
      p.child.kill('SIGCONT');
      await p.stop();
    }
    await store?.cleanup();
  });

  /** Reads runs from `via` until each is terminal (any process answers reads from the shared store). */
  async function settle(via: Served, runIds: string[], deadlineMs = 90_000): Promise<Map<string, any>> {
    const api = client(via.url, token);
    const done = new Map<string, any>();
    const until = Date.now() + deadlineMs;
    while (done.size < runIds.length && Date.now() < until) {
      for (const id of runIds) {
        if (done.has(id)) continue;
        const snap = (await api.get(`/v1/runs/${id}`)).body;
        if (TERMINAL.includes(snap.status)) done.set(id, snap);
      }
      if (done.size < runIds.length) await pause(200);
    }
    return done;
  }

  async function waitFor(check: () => Promise<boolean>, deadlineMs = 60_000): Promise<boolean> {
    const until = Date.now() + deadlineMs;
    while (Date.now() < until) {
      if (await check()) return true;
      await pause(100);
    }
    return false;
  }

  it('SIGKILL mid-way: the other processes take over its runs and every run completes exactly once', async () => {
    const byProc: string[][] = [[], [], []];
    for (let i = 0; i < RUNS; i++) {
      const p = i % 3;
      const res = await client(procs[p]!.url, token).post('/v1/runs', { workflowId: 'scale-delay' });
      expect(res.status).toBe(201);
      byProc[p]!.push(res.body.runId as string);
    }
    const victim = procs[0]!;
    const reader = client(procs[1]!.url, token);
    // Mid-way: every run of the victim has left its first node and none has finished.
    expect(
      await waitFor(async () => {
        for (const id of byProc[0]!) {
          const s = (await reader.get(`/v1/runs/${id}`)).body;
          if (s.nodeStates?.first?.status !== 'completed') return false;
        }
        return true;
      }),
    ).toBe(true);
    // The operator view: every process listed as running, each holding only runs that were started through it.
    const hosts = (await reader.get('/v1/operator/hosts')).body;
    const ownerOf = (p: Served) => hosts.processes.find((h: any) => h.owner.endsWith(`:${p.child.pid}`));
    for (const [i, p] of procs.entries()) {
      expect(ownerOf(p)?.running).toBe(true);
      for (const r of ownerOf(p).runs) expect(byProc[i]).toContain(r.run_id);
    }
    expect(ownerOf(procs[1]!).self).toBe(true);
    await victim.kill();
    const unfinished: string[] = [];
    for (const id of byProc[0]!)
      if (!TERMINAL.includes((await reader.get(`/v1/runs/${id}`)).body.status)) unfinished.push(id);
    expect(unfinished.length).toBeGreaterThan(0);

    const all = byProc.flat();
    const done = await settle(procs[1]!, all);
    expect([...done.values()].map((s) => s.status)).toEqual(all.map(() => 'completed'));
    for (const id of all) {
      const events = await reader.events(id);
      expect({ id, problems: [...logProblems(events), ...duplicateProblems(events)] }).toEqual({ id, problems: [] });
    }
    // The victim's unfinished runs were resumed from their logs elsewhere.
    for (const id of unfinished) expect((await reader.events(id)).some((e) => e.type === 'run.resuming')).toBe(true);
    // Every lease ended with its run; `mhs-host hosts` reads the same view from the store.
    const cli = spawnSync(cliEntry().command, [...cliEntry().args, 'hosts', '--db', store.location, '--json'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(cli.status).toBe(0);
    const listed = (JSON.parse(cli.stdout) as { processes: Array<{ runs: unknown[] }> }).processes;
    expect(listed.flatMap((p) => p.runs)).toEqual([]);
  }, 180_000);

  it('SIGSTOP past the lease: the paused owner is fenced off after SIGCONT and its runs complete on another process', async () => {
    const [, paused, other] = procs as [Served, Served, Served];
    const api = client(paused.url, token);
    const runIds: string[] = [];
    for (let i = 0; i < 3; i++) runIds.push((await api.post('/v1/runs', { workflowId: 'scale-pause' })).body.runId);
    const reader = client(other.url, token);
    // New runs are spread by load: the ones the paused process was handed are its own (at least its first).
    const hosts = (await reader.get('/v1/operator/hosts')).body;
    const mine = hosts.processes
      .find((h: any) => h.owner.endsWith(`:${paused.child.pid}`))
      .runs.map((r: any) => r.run_id);
    runIds.splice(0, runIds.length, ...runIds.filter((id) => mine.includes(id)));
    expect(runIds.length).toBeGreaterThan(0);
    expect(
      await waitFor(async () => {
        for (const id of runIds)
          if ((await reader.get(`/v1/runs/${id}`)).body.nodeStates?.wait1?.status !== 'running') return false;
        return true;
      }),
    ).toBe(true);
    paused.child.kill('SIGSTOP');
    // The other process takes the runs over once their leases lapsed (the paused pid is alive: only the lease says).
    const resumedElsewhere = await waitFor(async () => {
      for (const id of runIds) if (!(await reader.events(id)).some((e) => e.type === 'run.resuming')) return false;
      return true;
    });
    paused.child.kill('SIGCONT');
    expect(resumedElsewhere).toBe(true);

    const done = await settle(other, runIds);
    expect([...done.values()].map((s) => s.status)).toEqual(runIds.map(() => 'completed'));
    for (const id of runIds) {
      const events = await reader.events(id);
      expect({ id, problems: [...logProblems(events), ...duplicateProblems(events)] }).toEqual({ id, problems: [] });
      expect(events.filter((e) => e.type === 'run.resuming')).toHaveLength(1);
    }
    // After SIGCONT the former owner stepped down from each run and said so.
    expect(
      await waitFor(async () =>
        runIds.every((id) => paused.output().includes(id) && paused.output().includes('MHS.HOST.RUN_LEASE_LOST')),
      ),
    ).toBe(true);
    const lost = paused
      .output()
      .split('\n')
      .filter((l) => l.includes('MHS.HOST.RUN_LEASE_LOST'));
    for (const id of runIds) expect(lost.some((l) => l.includes(id))).toBe(true);
  }, 120_000);
});
