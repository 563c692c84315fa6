// Issue 19, every governed path through the endpoint's holder: two real `mhs-host serve` processes on one real
// PostgreSQL store (a schema of its own; skipped without MHS_TEST_PG_URL), endpoint leases on by default, one real
// HTTP simulator. A holds the endpoint; B does not. An `mhs.task` run B drives has each step executed once, by A; an
// agent's tool calls through B's MCP gateway (`/mcp`) list A's endpoint and execute once, by A; and a holder that
// never claims a forwarded call (SIGSTOPped, then SIGKILLed) leaves it to B, which withdraws it, takes the endpoint
// over and makes it itself, once. The simulator's own counters show every execution.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of HTTP responses are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capabilityToolName } from '../../src/mhs/tool-names.js';
import { openDb } from '../../src/ledger/index.js';
import { PG_URL, postgresBackend } from '../ledger/helpers.js';
import type { StoreHandle } from '../ledger/helpers.js';
import { startSimHttp } from '../helpers/sim.js';
import type { SimHttp } from '../helpers/sim.js';
import { call, gatewayHttp } from '../gateway/gateway-helpers.js';
import { enableSims, ledgerOf, simAttachCounters } from './scale-out-helpers.js';
import { client, makeToken, serve } from './serve-helpers.js';
import type { Served } from './serve-helpers.js';

const CONNECTOR = 'epp-thermostat';
const DEVICE = 'thermostat';
const SETPOINT = 'cap.thermal.setpoint.v1';
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function requestsOf(location: string): Promise<any[]> {
  const db = await openDb(location);
  try {
    return await db.all('SELECT * FROM endpoint_requests ORDER BY created_at');
  } finally {
    await db.close();
  }
}

/** Two processes: A enables (and so claims) the simulator's connector, B starts after it. */
function twoProcesses(env: Record<string, string>) {
  const h = { store: undefined as unknown as StoreHandle, sim: undefined as unknown as SimHttp, procs: [] as Served[] };
  beforeAll(async () => {
    h.sim = await startSimHttp('thermostat', []);
    h.store = await postgresBackend.fresh();
    h.procs.push(await serve(h.store.location, ['--no-workflows'], env));
    await enableSims(h.store.location, { thermostat: h.sim }, 'epp');
    h.procs.push(await serve(h.store.location, ['--no-workflows'], env));
  }, 180_000);
  afterAll(async () => {
    for (const p of h.procs) if (p.child.exitCode === null && p.child.signalCode === null) await p.stop();
    await h.sim?.stop();
    await h.store?.cleanup();
  });
  return h;
}

/** Waits until A (the first process) is listed holding the connector, named by its endpoint id. */
async function heldByA(via: Served, a: Served, token: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const body = (await client(via.url, token).get('/v1/operator/hosts')).body;
    const owners = (body.processes as any[])
      .filter((p) => (p.endpoints as any[]).some((e) => e.connector_id === CONNECTOR && e.endpoint_id))
      .map((p) => p.owner as string);
    if (owners.length === 1 && owners[0]!.endsWith(`:${a.child.pid}`)) return;
    await pause(50);
  }
  throw new Error('A never held the connector');
}

function taskWorkflow(id: string, sim: SimHttp, setpoints: number[]) {
  return {
    id,
    name: id,
    version: '1',
    nodes: [
      {
        id: 'task',
        typeId: 'mhs.task',
        name: 'task',
        position: { x: 0, y: 0 },
        config: {
          steps: setpoints.map((c, i) => ({
            id: `s${i}`,
            endpoint: sim.endpointId,
            device: DEVICE,
            capability: SETPOINT,
            input: { setpoint_c: c },
          })),
        },
        inputs: {},
      },
    ],
    edges: [],
    triggers: [{ id: 'manual', type: 'manual' }],
    variables: [],
    metadata: {},
    settings: {},
  };
}

async function runTaskOn(via: Served, h: { store: StoreHandle; sim: SimHttp }, id: string, setpoints: number[]) {
  const token = await makeToken(h.store.location, 'client', `${id}-client`);
  const op = client(via.url, await makeToken(h.store.location, 'operator', `${id}-op`));
  expect((await op.post('/v1/workflows', taskWorkflow(id, h.sim, setpoints))).status).toBe(201);
  const runId = (await client(via.url, token).post('/v1/runs', { workflowId: id })).body.runId as string;
  return { runId, api: client(via.url, token) };
}

const ended = (s: any) => ['completed', 'failed', 'cancelled'].includes(s.status);

describe.skipIf(!PG_URL)('an mhs.task and gateway tool calls on a process that does not hold the endpoint', () => {
  const h = twoProcesses({ MHS_RUN_LEASE_TTL_MS: '1500', MHS_RUN_LEASE_SKEW_MS: '200' });

  it('a task B drives: each step is forwarded to A and executed once, the run completes', async () => {
    const [a, b] = h.procs as [Served, Served];
    await heldByA(b, a, await makeToken(h.store.location, 'client'));
    const { runId, api } = await runTaskOn(b, h, 'epp-task', [21, 22]);
    const done = await api.until(runId, ended);
    expect(done.status, JSON.stringify(done.error ?? done)).toBe('completed');

    const c = await simAttachCounters(h.sim, DEVICE);
    expect(Object.values(c.executions as Record<string, number>)).toEqual([1, 1]);
    expect(c.capability_calls).toBe(2);
    // One session (the task's, opened by A and closed at the task's end through A).
    expect(c.session_opens).toBe(1);

    const rows = await requestsOf(h.store.location);
    const calls = rows.filter((r) => JSON.parse(r.request).kind === 'invoke');
    expect(calls.map((r) => r.status)).toEqual(['applied', 'applied']);
    for (const r of rows) {
      expect(r.sender).toMatch(new RegExp(`:${b.child.pid}$`));
      expect(r.applied_by).toMatch(new RegExp(`:${a.child.pid}$`));
    }
    expect(rows.filter((r) => JSON.parse(r.request).kind === 'closeScope').map((r) => r.status)).toEqual(['applied']);
    expect(Object.keys(c.executions as object).sort()).toEqual(calls.map((r) => r.command_id).sort());

    const { entries, verified } = await ledgerOf(h.store.location);
    // Only A attached the endpoint (an attach records its disclosure).
    expect(entries.filter((e) => e.kind === 'disclosure')).toHaveLength(1);
    const intents = entries.filter((e) => e.kind === 'command.intent' && e.run_id === runId);
    expect(intents).toHaveLength(2);
    // B recorded the task (its parent action names both children), A the commands in it.
    const end = entries.find((e) => e.kind === 'parent_action' && e.phase === 'end');
    expect((end!.children as any[]).map((ch) => ch.command_id).sort()).toEqual(intents.map((e) => e.command_id).sort());
    expect(verified).toBe(true);
  }, 90_000);

  it("an agent's tool calls through B's /mcp: A's endpoint is listed, read and called once through A", async () => {
    const [a, b] = h.procs as [Served, Served];
    const before = await simAttachCounters(h.sim, DEVICE);
    const agent = await gatewayHttp(b.url, await makeToken(h.store.location, 'agent', 'epp-bot'), '2026-07-28');
    try {
      const tool = capabilityToolName(DEVICE, SETPOINT);
      const listed = (await agent.listTools()).tools.map((t) => t.name);
      expect(listed).toContain(tool);
      const read = await call(agent, 'mhs__read', { device_id: DEVICE });
      expect(read.isError, read.text).toBe(false);
      expect(read.body.device_id).toBe(DEVICE);
      const r = await call(agent, tool, { setpoint_c: 26 });
      expect(r.isError, r.text).toBe(false);
      expect(r.body.receipt.status).toBe('completed');
      const commandId = r.body.command_id as string;

      const c = await simAttachCounters(h.sim, DEVICE);
      expect((c.executions as Record<string, number>)[commandId]).toBe(1);
      expect(c.capability_calls).toBe((before.capability_calls as number) + 1);
      const row = (await requestsOf(h.store.location)).find((x) => x.command_id === commandId);
      expect(row.status).toBe('applied');
      expect(row.sender).toMatch(new RegExp(`:${b.child.pid}$`));
      expect(row.applied_by).toMatch(new RegExp(`:${a.child.pid}$`));
      const { entries, verified } = await ledgerOf(h.store.location);
      expect(entries.filter((e) => e.kind === 'command.intent' && e.command_id === commandId)).toHaveLength(1);
      expect(entries.some((e) => e.kind === 'tool_call' && e.command_id === commandId)).toBe(true);
      expect(verified).toBe(true);
    } finally {
      await agent.close();
    }
  }, 90_000);
});

describe.skipIf(!PG_URL)('the holder SIGKILLed before it claims a forwarded call', () => {
  // A long lease, so that the paused holder still looks live when B forwards; its death is seen by its pid.
  const h = twoProcesses({ MHS_RUN_LEASE_TTL_MS: '6000', MHS_RUN_LEASE_SKEW_MS: '200' });

  it('B withdraws the call, takes the endpoint over and makes it once', async () => {
    const [a, b] = h.procs as [Served, Served];
    await heldByA(b, a, await makeToken(h.store.location, 'client'));
    process.kill(a.child.pid!, 'SIGSTOP');
    let killed = false;
    try {
      const { runId, api } = await runTaskOn(b, h, 'epp-stop', [23]);
      let pending: any;
      for (let i = 0; i < 400 && !pending; i++) {
        pending = (await requestsOf(h.store.location)).find((r) => JSON.parse(r.request).kind === 'invoke');
        if (!pending) await pause(25);
      }
      expect(pending?.status).toBe('pending');
      await a.kill();
      killed = true;
      const done = await api.until(runId, ended);
      const failed = (await api.events(runId)).find((e: any) => e.type === 'node.failed');
      expect(done.status, JSON.stringify(failed ?? done)).toBe('completed');

      const row = (await requestsOf(h.store.location)).find((r) => r.request_id === pending.request_id);
      expect(row.status).toBe('expired');
      expect(row.command_id).toBeNull();
      const c = await simAttachCounters(h.sim, DEVICE);
      expect(Object.values(c.executions as Record<string, number>)).toEqual([1]);
      const { entries, verified } = await ledgerOf(h.store.location);
      const intents = entries.filter((e) => e.kind === 'command.intent' && e.run_id === runId);
      expect(intents).toHaveLength(1);
      expect(Object.keys(c.executions as object)).toEqual([intents[0]!.command_id]);
      expect(verified).toBe(true);
    } finally {
      if (!killed) {
        process.kill(a.child.pid!, 'SIGCONT');
      }
    }
  }, 120_000);
});
