// Guarantees (issue 7 §2, HOST-081, HOST-091): SIGKILL of `mhs-host serve` while an `mhs.task` over two
// simulators is mid-task (one endpoint's steps done, the other endpoint's command in flight, a step not yet
// sent): after a restart on the same store the run completes; the task keeps its task id, parent action and
// trace; finished steps are not run again; the in-flight command is reconciled under its own command_id,
// never resent; only the remaining step runs; every device counter shows each command executed exactly once;
// the ledger verifies.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are read loosely in assertions */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RealClock } from '../../src/core/index.js';
import { openDb, openLedger } from '../../src/ledger/index.js';
import type { LedgerEntry } from '../../src/ledger/index.js';
import { openConnectorStore } from '../../src/policy/connector-store.js';
import { createEnablement } from '../../src/policy/enablement.js';
import { createTokenStore } from '../../src/policy/tokens.js';
import { callMhs, connectMcpClient, startSimHttp } from '../helpers/sim.js';
import type { SimHttp } from '../helpers/sim.js';
import { client, logProblems, serve, tempDb } from './serve-helpers.js';
import type { Served } from './serve-helpers.js';

const clock = new RealClock();
let sims: Record<'thermo' | 'conveyor', SimHttp>;
let dbPath: string;
let srv: Served | undefined;
let token: string;

beforeAll(async () => {
  const [thermo, conveyor] = await Promise.all([
    startSimHttp('thermostat', ['--time-scale', '50']),
    // Every conveyor tool call is answered 1 s later: the kill lands while its first step is in flight.
    startSimHttp('conveyor', ['--latency-ms', '1000']),
  ]);
  sims = { thermo: thermo!, conveyor: conveyor! };
  dbPath = tempDb();
  const db = await openDb(dbPath);
  try {
    const ledger = await openLedger(db, { clock });
    const store = await openConnectorStore(db, { clock });
    const enablement = createEnablement({ store, ledger });
    for (const [name, sim] of Object.entries(sims)) {
      const id = `task-resume-${name}`;
      await store.upsertDiscovered({
        connector_id: id,
        transport: 'http',
        url: sim.mcpUrl,
        base_url: sim.url,
        endpoint_id: sim.endpointId,
        display_name: name,
        source: { kind: 'env', ref: 'MHS_ENDPOINTS' },
        seen_in: [{ kind: 'env', ref: 'MHS_ENDPOINTS' }],
        auth: { scheme: 'none' },
        descriptor: null,
      });
      await enablement.enable(id, { id: 'test-setup', via: 'test' });
    }
    token = (await createTokenStore(db, clock).add('resume-client', 'client')).token;
  } finally {
    await db.close();
  }
  srv = await serve(dbPath, ['--no-workflows']);
}, 120_000);

afterAll(async () => {
  await srv?.stop();
  await Promise.all(Object.values(sims ?? {}).map((s) => s.stop()));
});

async function entries(): Promise<LedgerEntry[]> {
  const db = await openDb(dbPath);
  try {
    return await (await openLedger(db, { clock })).range(0);
  } finally {
    await db.close();
  }
}

async function counters(sim: SimHttp, device: string): Promise<Record<string, number>> {
  const c = await connectMcpClient({ mcpUrl: sim.mcpUrl });
  try {
    const state = (await callMhs(c, 'mhs__read', { device_id: device, resource: '_counters' })).body.state as any;
    return state.executions as Record<string, number>;
  } finally {
    await c.close();
  }
}

it('HOST-081/HOST-091: SIGKILL mid-mhs.task; after restart the task resumes from its last recorded step, nothing runs twice', async () => {
  const thermo = { endpoint: sims.thermo.endpointId, device: 'thermostat', capability: 'cap.thermal.setpoint.v1' };
  const conveyor = { endpoint: sims.conveyor.endpointId, device: 'conveyor-workcell', capability: 'cap.world.step.v1' };
  const steps = [
    { id: 'warm', ...thermo, input: { setpoint_c: 25 } },
    { id: 'advance', ...conveyor, input: { ticks: 2 } },
    { id: 'hold', ...thermo, input: { setpoint_c: 27 } },
    { id: 'advance-more', ...conveyor, input: { ticks: 1 } },
  ];
  let api = client(srv!.url, token);
  const def = {
    id: 'resume-task',
    name: 'resume-task',
    version: '1',
    nodes: [{ id: 'task', typeId: 'mhs.task', name: 'task', position: { x: 0, y: 0 }, config: { steps }, inputs: {} }],
    edges: [],
    triggers: [{ id: 'manual', type: 'manual' }],
    variables: [],
    metadata: {},
    settings: {},
  };
  expect((await api.post('/v1/workflows', def)).status).toBe(201);
  const runId = (await api.post('/v1/runs', { workflowId: 'resume-task' })).body.runId as string;

  // Kill once both thermostat steps are journaled and the first conveyor command is in flight.
  let before: LedgerEntry[] = [];
  const ready = (es: LedgerEntry[]) => {
    const mine = es.filter((e) => e.kind === 'command.intent' && e.run_id === runId);
    return (
      mine.filter((e) => e.endpoint_id === thermo.endpoint).length === 2 &&
      mine.filter((e) => e.endpoint_id === conveyor.endpoint).length === 1
    );
  };
  for (let i = 0; i < 400 && !ready(before); i++) {
    before = await entries();
    if (!ready(before)) await api.get(`/v1/runs/${runId}/events/poll?afterSequence=1000000&timeout=25`);
  }
  expect(ready(before)).toBe(true);
  await srv!.kill();
  const inFlight = before.find((e) => e.kind === 'command.intent' && e.endpoint_id === conveyor.endpoint)!;
  const thermoCmds = before
    .filter((e) => e.kind === 'command.intent' && e.endpoint_id === thermo.endpoint)
    .map((e) => e.command_id as string);
  // The task had not finished: its last conveyor step was not yet sent.
  expect(before.some((e) => e.kind === 'parent_action' && e.phase === 'end' && e.run_id === runId)).toBe(false);

  srv = await serve(dbPath, ['--no-workflows']);
  api = client(srv.url, token);
  const done = await api.until(runId, (s) => ['completed', 'failed', 'cancelled'].includes(s.status as string));
  expect(done.status).toBe('completed');
  expect(logProblems(await api.events(runId))).toEqual([]);
  const out = done.nodeStates.task.outputs as any;
  expect(out.ok).toBe(true);
  expect(out.steps.map((s: any) => s.receipt.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
  // Steps 0 and 2 kept their first commands; step 1 settled under the in-flight command_id (never resent).
  expect([out.steps[0].commandId, out.steps[2].commandId]).toEqual(thermoCmds);
  expect(out.steps[1].commandId).toBe(inFlight.command_id);

  const all = await entries();
  const starts = all.filter((e) => e.kind === 'parent_action' && e.phase === 'start' && e.run_id === runId);
  expect(starts).toHaveLength(1);
  const taskId = starts[0]!.task_id as string;
  expect(out.taskId).toBe(taskId);
  const ends = all.filter((e) => e.kind === 'parent_action' && e.phase === 'end' && e.task_id === taskId);
  expect(ends).toHaveLength(1);
  expect(ends[0]).toMatchObject({ ok: true, resumed: true, parent_seq: starts[0]!.seq });
  // One intent per step: nothing was sent twice, under any command_id.
  const intents = all.filter((e) => e.kind === 'command.intent' && e.task_id === taskId);
  expect(intents.map((e) => e.command_id).sort()).toEqual(out.steps.map((s: any) => s.commandId).sort());
  // One trace for the whole task, across the restart.
  const traceId = String(starts[0]!.traceparent).split('-')[1];
  expect(new Set(intents.map((e) => String(e.traceparent).split('-')[1]))).toEqual(new Set([traceId]));

  const thermoCounts = await counters(sims.thermo, thermo.device);
  const conveyorCounts = await counters(sims.conveyor, conveyor.device);
  for (const [i, s] of (out.steps as any[]).entries()) {
    const counts = i % 2 === 0 ? thermoCounts : conveyorCounts;
    expect({ step: i, n: counts[s.commandId as string] }).toEqual({ step: i, n: 1 });
  }
  expect(Object.values({ ...thermoCounts, ...conveyorCounts }).filter((n) => n !== 1)).toEqual([]);

  const db = await openDb(dbPath);
  try {
    expect((await (await openLedger(db, { clock })).verify()).ok).toBe(true);
  } finally {
    await db.close();
  }
}, 180_000);
