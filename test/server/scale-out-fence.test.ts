// Issue 19, side effects fenced by a lease: real `mhs-host serve` processes on one real PostgreSQL store (a schema of
// its own; skipped without MHS_TEST_PG_URL) and a real HTTP simulator (every call answered after 2.5 s). An `mhs.task`
// of two commands on one device runs on B. B is paused (SIGSTOP) once the node showed its disclosure and is opening
// its session, about to journal and send its first command, and stays paused past its leases, so C takes the run
// over, runs the task's two steps and completes the run. After SIGCONT, B journals nothing and sends nothing. The
// simulator's own counters show exactly C's two commands, each executed once (without the fence B sends too). Two
// fences, each shown alone:
// - the run lease (endpoint leases off, MHS_ENDPOINT_LEASES=off: every process attaches the endpoint): B's task goes
//   on to its first intent, and the run-lease check in the transaction that would journal it refuses it
//   (MHS.HOST.RUN_LEASE_LOST);
// - the endpoint lease (on, the default on PostgreSQL): B holds the endpoint, C takes it over (token 2) with the run;
//   B finds it lost the endpoint (its renewal, or the endpoint-lease check in its intent's transaction, whichever
//   comes first: MHS.HOST.ENDPOINT_LEASE_LOST) and detaches it.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of HTTP responses are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_URL, postgresBackend } from '../ledger/helpers.js';
import type { StoreHandle } from '../ledger/helpers.js';
import { startSimHttp } from '../helpers/sim.js';
import type { SimHttp } from '../helpers/sim.js';
import { enableSims, ledgerOf, simCounters } from './scale-out-helpers.js';
import { client, logProblems, makeToken, serve } from './serve-helpers.js';
import type { Served } from './serve-helpers.js';

const DEVICE = 'conveyor-workcell';
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

const FENCES = [
  { fence: 'run', prefix: 'fence', endpointLeases: 'off', lost: 'MHS.HOST.RUN_LEASE_LOST' },
  { fence: 'endpoint', prefix: 'epfence', endpointLeases: 'on', lost: 'MHS.HOST.ENDPOINT_LEASE_LOST' },
] as const;

describe.skipIf(!PG_URL).each(FENCES)('a paused former owner sends no command: the $fence lease', (f) => {
  const LEASE_ENV = {
    MHS_RUN_LEASE_TTL_MS: '1500',
    MHS_RUN_LEASE_SKEW_MS: '200',
    MHS_ENDPOINT_LEASES: f.endpointLeases,
  };
  let store: StoreHandle;
  let token = '';
  let sim: SimHttp;
  let b: Served;
  let c: Served;

  beforeAll(async () => {
    // Every call (session, command, read) is answered after 2.5 s: B is paused inside one.
    sim = await startSimHttp('conveyor', ['--latency-ms', '2500']);
    store = await postgresBackend.fresh();
    token = await makeToken(store.location, 'client');
    b = await serve(store.location, ['--no-workflows'], LEASE_ENV);
    await enableSims(store.location, { conveyor: sim }, f.prefix);
    // Started after the enablement; B picks the connector up when it is enabled, as every process does.
    c = await serve(store.location, ['--no-workflows'], LEASE_ENV);
  }, 180_000);
  afterAll(async () => {
    for (const p of [b, c]) {
      if (!p || p.child.exitCode !== null || p.child.signalCode !== null) continue;
      p.child.kill('SIGCONT');
      await p.stop();
    }
    await sim?.stop();
    await store?.cleanup();
  });

  it('SIGSTOP past the lease: after SIGCONT its command is refused before it is journaled or sent', async () => {
    const step = (id: string) => ({
      id,
      endpoint: sim.endpointId,
      device: DEVICE,
      capability: 'cap.world.step.v1',
      input: { ticks: 1 },
    });
    const wf = {
      id: `${f.prefix}-task`,
      name: `${f.prefix}-task`,
      version: '1',
      nodes: [
        {
          id: 'task',
          typeId: 'mhs.task',
          name: 'task',
          position: { x: 0, y: 0 },
          config: { steps: [step('one'), step('two')] },
          inputs: {},
        },
      ],
      edges: [],
      triggers: [{ id: 'manual', type: 'manual' }],
      variables: [],
      metadata: {},
      settings: {},
    };
    const apiB = client(b.url, token);
    // Registering a workflow is an operator action (issue 20).
    const opB = client(b.url, await makeToken(store.location, 'operator', 'fence-op'));
    expect((await opB.post('/v1/workflows', wf)).status).toBe(201);
    const runId = (await apiB.post('/v1/runs', { workflowId: wf.id })).body.runId as string;
    const intents = async () =>
      (await ledgerOf(store.location)).entries.filter((e) => e.kind === 'command.intent' && e.run_id === runId);
    // The node showed the session's disclosure and opens its session (each call to the simulator takes 2.5 s): it is
    // about to journal and send its first command. Pause B now.
    const apiC = client(c.url, token);
    let disclosed = false;
    for (let i = 0; i < 2000 && !disclosed; i++) {
      disclosed = (await apiC.events(runId)).some(
        (e) => e.type === 'log.appended' && (e.payload.fields as Record<string, unknown> | undefined)?.disclosure,
      );
      if (!disclosed) await pause(5);
    }
    expect(disclosed).toBe(true);
    b.child.kill('SIGSTOP');
    expect(await intents()).toEqual([]);

    // C takes the run over once B's lease lapsed, resumes the task (no intent recorded: its steps run) and completes.
    const done = await apiC.until(runId, (s) => ['completed', 'failed', 'cancelled'].includes(s.status));
    b.child.kill('SIGCONT');
    expect(done.status).toBe('completed');
    const log = await apiC.events(runId);
    expect(logProblems(log)).toEqual([]);
    expect(log.filter((e) => e.type === 'run.resuming')).toHaveLength(1);

    // B wakes and its task goes on to its first intent, refused by the fence (B says so and steps down). Its session
    // call answers only after SIGCONT: give it the time to get there.
    for (let i = 0; i < 200 && !b.output().includes(f.lost); i++) await pause(50);
    await pause(3000);
    // Only C's two commands were journaled, sent and executed, once each.
    const journaled = await intents();
    expect(journaled).toHaveLength(2);
    const counts = await simCounters(sim, DEVICE);
    expect(Object.keys(counts.executions).sort()).toEqual(journaled.map((e) => e.command_id as string).sort());
    expect(Object.values(counts.executions)).toEqual([1, 1]);
    expect(counts.calls).toBe(2);
    expect(b.output()).toContain(f.lost);
    if (f.fence === 'endpoint') {
      // C holds the endpoint now, with the token raised by its takeover; B holds nothing.
      const hosts = (await apiC.get('/v1/operator/hosts')).body.processes as Array<{ owner: string; endpoints: any[] }>;
      const holders = hosts.filter((p) => p.endpoints.length);
      expect(holders.map((p) => p.owner)).toEqual([hosts.find((p) => p.owner.endsWith(`:${c.child.pid}`))!.owner]);
      expect(holders[0]!.endpoints[0].token).toBe(2);
    }
    expect((await ledgerOf(store.location)).verified).toBe(true);
  }, 120_000);
});
