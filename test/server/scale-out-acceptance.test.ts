// Issue 19 acceptance: three real `mhs-host serve` processes on one real PostgreSQL store (a schema of its own; skipped
// without MHS_TEST_PG_URL) and two real HTTP thermostat simulators. 100 workflow runs are started through all three
// processes: most wait on delays, some make a governed device call and then wait on an approval gate. One process is
// killed with SIGKILL mid-way; the approval gates are answered through a process that does not drive the run (the
// answer is forwarded, and stored when the owner is the dead one, for the process that takes the run over). Every
// run completes exactly once: one terminal event, no node started or completed twice, a gap-free, schema-valid log;
// every governed command was executed exactly once by its simulator (its own counters), and the ledger verifies.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of HTTP responses are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/openwop/types.js';
import { PG_URL, postgresBackend } from '../ledger/helpers.js';
import type { StoreHandle } from '../ledger/helpers.js';
import { startSimHttp } from '../helpers/sim.js';
import type { SimHttp } from '../helpers/sim.js';
import { enableSims, ledgerOf, simCounters } from './scale-out-helpers.js';
import { client, logProblems, makeToken, serve } from './serve-helpers.js';
import type { Served } from './serve-helpers.js';
import { chainNode as node, chainWorkflow as chain } from '../helpers/chain-workflow.js';

const LEASE_ENV = { MHS_RUN_LEASE_TTL_MS: '1500', MHS_RUN_LEASE_SKEW_MS: '200' };
const RUNS = 100;
const GOVERNED_PER_SIM = 3;
const TERMINAL = ['completed', 'failed', 'cancelled'];
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

const plain = chain('acc-plain', [
  node('first', 0),
  node('wait1', 1, 'core.delay', { durationMs: 1500 }),
  node('mid', 2),
  node('wait2', 3, 'core.delay', { durationMs: 1500 }),
  node('last', 4),
]);
const governed = (sim: SimHttp, i: number) =>
  chain(`acc-governed-${i}`, [
    node('first', 0),
    node('warm', 1, 'mhs.invoke', {
      endpoint: sim.endpointId,
      device: 'thermostat',
      capability: 'cap.thermal.setpoint.v1',
      input: { setpoint_c: 25 },
    }),
    node('gate', 2, 'core.approvalGate'),
    node('last', 3),
  ]);

/** Problems of one run's log beyond `logProblems`: every node of `def` started and completed exactly once. */
function duplicateProblems(def: { nodes: Array<{ id: string }> }, events: RunEvent[]): string[] {
  const out: string[] = [];
  for (const { id } of def.nodes)
    for (const type of ['node.started', 'node.completed']) {
      const n = events.filter((e) => e.type === type && e.nodeId === id).length;
      if (n !== 1) out.push(`${type} ${id} x${n}`);
    }
  return out;
}

describe.skipIf(!PG_URL)('three serve processes on one PostgreSQL store, one SIGKILLed mid-way', () => {
  let store: StoreHandle;
  let token = '';
  let sims: SimHttp[] = [];
  const procs: Served[] = [];

  beforeAll(async () => {
    sims = await Promise.all([0, 1].map(() => startSimHttp('thermostat', ['--time-scale', '50'])));
    store = await postgresBackend.fresh();
    token = await makeToken(store.location, 'client');
    procs.push(await serve(store.location, ['--no-workflows'], LEASE_ENV));
    await enableSims(store.location, { t0: sims[0]!, t1: sims[1]! }, 'acc');
    for (let i = 0; i < 2; i++) procs.push(await serve(store.location, ['--no-workflows'], LEASE_ENV));
    // Registering a workflow is an operator action (issue 20); runs are started with the client token.
    const api = client(procs[0]!.url, await makeToken(store.location, 'operator', 'acc-op'));
    expect((await api.post('/v1/workflows', plain)).status).toBe(201);
    for (const [i, sim] of sims.entries()) expect((await api.post('/v1/workflows', governed(sim, i))).status).toBe(201);
  }, 180_000);
  afterAll(async () => {
    for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) await p.stop();
    await Promise.all(sims.map((s) => s.stop()));
    await store?.cleanup();
  });

  it('100 runs, one process SIGKILLed: every run completes exactly once, no command executes twice, logs verify', async () => {
    const apis = procs.map((p) => client(p.url, token));
    const defs = new Map<string, ReturnType<typeof chain>>();
    const start = async (i: number, workflowId: string) => {
      const res = await apis[i % 3]!.post('/v1/runs', { workflowId });
      expect(res.status).toBe(201);
      defs.set(
        res.body.runId as string,
        workflowId === plain.id ? plain : governed(sims[Number(workflowId.at(-1))]!, 0),
      );
      return res.body.runId as string;
    };
    // Governed runs: on each simulator one after another (its device takes one command at a time across processes),
    // each past its device call (waiting at its gate) before the next; the delay runs start alongside, in batches.
    const gated: string[] = [];
    const governedRuns = Promise.all(
      sims.map(async (_, s) => {
        for (let k = 0; k < GOVERNED_PER_SIM; k++) {
          const id = await start(s + k * 2, `acc-governed-${s}`);
          gated.push(id);
          await apis[0]!.until(id, (snap) => snap.status === 'waiting-approval' || TERMINAL.includes(snap.status));
        }
      }),
    );
    const plainCount = RUNS - GOVERNED_PER_SIM * sims.length;
    for (let b = 0; b < plainCount; b += 10)
      await Promise.all(Array.from({ length: Math.min(10, plainCount - b) }, (_, j) => start(b + j, plain.id)));
    await governedRuns;
    expect(defs.size).toBe(RUNS);

    // Mid-way: kill the process that drives the most runs now (unfinished: some in their delays, some at their gates).
    const hosts = (await apis[1]!.get('/v1/operator/hosts')).body;
    const load = (p: Served) => hosts.processes.find((h: any) => h.owner.endsWith(`:${p.child.pid}`))?.runs.length ?? 0;
    const victim = [...procs].sort((x, y) => load(y) - load(x))[0]!;
    const ownerOf = new Map<string, string>();
    for (const h of hosts.processes as any[]) for (const r of h.runs as any[]) ownerOf.set(r.run_id, h.owner);
    expect(load(victim)).toBeGreaterThan(0);
    await victim.kill();
    const live = procs.filter((p) => p !== victim);

    // Each gate answered through a live process that did not drive its run when it was asked.
    for (const id of gated) {
      const via = live.find((p) => ownerOf.get(id) !== undefined && !ownerOf.get(id)!.endsWith(`:${p.child.pid}`));
      const res = await client((via ?? live[0]!).url, token).post(`/v1/runs/${id}/interrupts/gate`, {
        action: 'accept',
      });
      // The owner applied it (200), or it died first and the answer is stored for the process taking the run over.
      expect([200, 503]).toContain(res.status);
      if (res.status === 503) expect(res.body.error).toBe('MHS.HOST.RUN_REQUEST_PENDING');
    }

    const reader = client(live[0]!.url, token);
    const pending = new Set(defs.keys());
    const until = Date.now() + 90_000;
    while (pending.size && Date.now() < until) {
      for (const id of [...pending])
        if (TERMINAL.includes((await reader.get(`/v1/runs/${id}`)).body.status)) pending.delete(id);
      if (pending.size) await pause(250);
    }
    expect([...pending]).toEqual([]);

    const commands: Array<{ sim: SimHttp; commandId: string }> = [];
    let resumed = 0;
    for (const [id, def] of defs) {
      const snap = (await reader.get(`/v1/runs/${id}`)).body;
      const log = await reader.events(id);
      expect({ id, status: snap.status, problems: [...logProblems(log), ...duplicateProblems(def, log)] }).toEqual({
        id,
        status: 'completed',
        problems: [],
      });
      expect(log.filter((e) => e.type === 'interrupt.resolved')).toHaveLength(def.id === plain.id ? 0 : 1);
      if (log.some((e) => e.type === 'run.resuming')) resumed++;
      if (def.id !== plain.id) {
        const sim = sims.find((s) => s.endpointId === def.nodes[1]!.config.endpoint)!;
        commands.push({ sim, commandId: snap.nodeStates.warm.outputs.commandId as string });
      }
    }
    // The victim's runs were taken over and resumed from their logs.
    expect(resumed).toBeGreaterThan(0);
    // Every governed command executed exactly once, and the simulators executed nothing else.
    for (const [s, sim] of sims.entries()) {
      const counts = await simCounters(sim, 'thermostat');
      const mine = commands.filter((c) => c.sim === sim).map((c) => c.commandId);
      expect({ s, executions: counts.executions }).toEqual({
        s,
        executions: Object.fromEntries(mine.map((c) => [c, 1])),
      });
    }
    expect((await ledgerOf(store.location)).verified).toBe(true);
  }, 240_000);
});
