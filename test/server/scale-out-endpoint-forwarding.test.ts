// Issue 19, forwarding through the endpoint's holder: two real `mhs-host serve` processes on one real PostgreSQL store
// (a schema of its own; skipped without MHS_TEST_PG_URL), endpoint leases on by default, one real HTTP simulator. A
// holds the endpoint; a run started on B (B drives it) makes a governed call: B stores it in `endpoint_requests`, A
// claims it in its intent's transaction, executes it once through its governed path and B's node gets the receipt.
// Then A is SIGKILLed while a forwarded command is in flight: B takes the endpoint over, reconciles the command by its
// id (never resent) and its run completes. The simulator's own counters show each command executed once.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of HTTP responses are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDb } from '../../src/ledger/index.js';
import type { LedgerEntry } from '../../src/ledger/index.js';
import { PG_URL, postgresBackend } from '../ledger/helpers.js';
import type { StoreHandle } from '../ledger/helpers.js';
import { startSimHttp } from '../helpers/sim.js';
import type { SimHttp } from '../helpers/sim.js';
import { enableSims, ledgerOf, simAttachCounters } from './scale-out-helpers.js';
import { client, makeToken, serve } from './serve-helpers.js';
import type { Served } from './serve-helpers.js';
import { chainNode as node, chainWorkflow as chain } from '../helpers/chain-workflow.js';

const ENV = { MHS_RUN_LEASE_TTL_MS: '1500', MHS_RUN_LEASE_SKEW_MS: '200' };
const CONNECTOR = 'epf-thermostat';
const DEVICE = 'thermostat';
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

const counters = async (sim: SimHttp): Promise<Record<string, any>> => simAttachCounters(sim, DEVICE);

async function requestsOf(location: string): Promise<any[]> {
  const db = await openDb(location);
  try {
    return await db.all('SELECT * FROM endpoint_requests ORDER BY created_at');
  } finally {
    await db.close();
  }
}

/** Two processes: A enables (and so claims) the simulator's connector, B starts after it. */
function twoProcesses(latencyMs: number) {
  const h = { store: undefined as unknown as StoreHandle, sim: undefined as unknown as SimHttp, procs: [] as Served[] };
  beforeAll(async () => {
    h.sim = await startSimHttp('thermostat', latencyMs ? ['--latency-ms', String(latencyMs)] : []);
    h.store = await postgresBackend.fresh();
    h.procs.push(await serve(h.store.location, ['--no-workflows'], ENV));
    await enableSims(h.store.location, { thermostat: h.sim }, 'epf');
    h.procs.push(await serve(h.store.location, ['--no-workflows'], ENV));
  }, 180_000);
  afterAll(async () => {
    for (const p of h.procs) if (p.child.exitCode === null && p.child.signalCode === null) await p.stop();
    await h.sim?.stop();
    await h.store?.cleanup();
  });
  return h;
}

/** Waits until A (the first process) is listed holding the connector. */
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

async function startOn(via: Served, location: string, sim: SimHttp, id: string, token: string): Promise<string> {
  const opToken = await makeToken(location, 'operator', `${id}-op`);
  const wf = chain(id, [
    node('warm', 0, 'mhs.invoke', {
      endpoint: sim.endpointId,
      device: DEVICE,
      capability: 'cap.thermal.setpoint.v1',
      input: { setpoint_c: 24 },
    }),
  ]);
  expect((await client(via.url, opToken).post('/v1/workflows', wf)).status).toBe(201);
  return (await client(via.url, token).post('/v1/runs', { workflowId: id })).body.runId as string;
}

describe.skipIf(!PG_URL)('a governed call forwarded to the endpoint holder', () => {
  const h = twoProcesses(0);

  it('B drives the run, A (the holder) executes the call once, B gets the receipt', async () => {
    const [a, b] = h.procs as [Served, Served];
    const token = await makeToken(h.store.location, 'client');
    await heldByA(b, a, token);
    // Only A attached the endpoint (one manifest read, as the attach does).
    expect((await counters(h.sim)).manifest_reads).toBe(1);
    const runId = await startOn(b, h.store.location, h.sim, 'epf-one', token);
    const done = await client(b.url, token).until(runId, (s) =>
      ['completed', 'failed', 'cancelled'].includes(s.status),
    );
    expect(done.status).toBe('completed');

    const c = await counters(h.sim);
    expect(c.capability_calls).toBe(1);
    expect(Object.values(c.executions)).toEqual([1]);
    // One session, A's: B opened none.
    expect(c.session_opens).toBe(1);
    expect(c.session_opens).toBe(1);

    const rows = await requestsOf(h.store.location);
    expect(rows).toHaveLength(1);
    expect(rows[0].status).toBe('applied');
    expect(rows[0].sender).toMatch(new RegExp(`:${b.child.pid}$`));
    expect(rows[0].applied_by).toMatch(new RegExp(`:${a.child.pid}$`));
    expect(rows[0].run_owner).toBe(rows[0].sender);
    const { entries, verified } = await ledgerOf(h.store.location);
    const intents = entries.filter((e) => e.kind === 'command.intent' && e.run_id === runId);
    expect(intents).toHaveLength(1);
    expect(intents[0]!.command_id).toBe(rows[0].command_id);
    expect(Object.keys(c.executions)).toEqual([rows[0].command_id]);
    // The node's output is the receipt A recorded for that command.
    const events = (await client(b.url, token).get(`/v1/runs/${runId}/events`)).body.events as any[];
    const completed = events.find((e) => e.type === 'node.completed' && e.nodeId === 'warm');
    expect(completed.payload.outputs.commandId).toBe(rows[0].command_id);
    expect(completed.payload.outputs.receipt.status).toBe('completed');
    expect(verified).toBe(true);
  }, 60_000);
});

describe.skipIf(!PG_URL)('the holder SIGKILLed while a forwarded command is in flight', () => {
  const h = twoProcesses(2000);

  it('B takes the endpoint over and reconciles the command by its id; executed once, never resent', async () => {
    const [a, b] = h.procs as [Served, Served];
    const token = await makeToken(h.store.location, 'client');
    await heldByA(b, a, token);
    const runId = await startOn(b, h.store.location, h.sim, 'epf-kill', token);
    let intent: LedgerEntry | undefined;
    for (let i = 0; i < 400 && !intent; i++) {
      intent = (await ledgerOf(h.store.location)).entries.find(
        (e) => e.kind === 'command.intent' && e.run_id === runId,
      );
      if (!intent) await pause(25);
    }
    expect(intent).toBeDefined();
    const [row] = await requestsOf(h.store.location);
    expect(row.status).toBe('sent');
    expect(row.applied_by).toMatch(new RegExp(`:${a.child.pid}$`));
    await a.kill();

    const done = await client(b.url, token).until(runId, (s) =>
      ['completed', 'failed', 'cancelled'].includes(s.status),
    );
    expect(done.status, JSON.stringify(done.error ?? done)).toBe('completed');
    const c = await counters(h.sim);
    expect(c.executions).toEqual({ [String(intent!.command_id)]: 1 });
    // HOST-091 may confirm by a same-id retry (answered from retention, not executed): one or two calls.
    expect(c.capability_calls).toBeLessThanOrEqual(2);
    const { entries, verified } = await ledgerOf(h.store.location);
    expect(entries.filter((e) => e.kind === 'command.intent' && e.run_id === runId)).toHaveLength(1);
    const mine = entries.filter((e) => e.command_id === intent!.command_id);
    expect(mine.some((e) => e.kind === 'receipt')).toBe(true);
    const events = (await client(b.url, token).get(`/v1/runs/${runId}/events`)).body.events as any[];
    const completed = events.find((e) => e.type === 'node.completed' && e.nodeId === 'warm');
    expect(completed.payload.outputs.commandId).toBe(intent!.command_id);
    expect(verified).toBe(true);
  }, 60_000);
});
