// Issue 19, a forwarded call waiting for a human approval longer than its sender waits: two real `mhs-host serve`
// processes on one real PostgreSQL store (a schema of its own; skipped without MHS_TEST_PG_URL), a real liquid-handler
// simulator whose aspirate needs an operator's approval. A holds the endpoint; a run B drives makes the call with a
// short deadline, so B withdraws it before anyone decides. A stops waiting and voids the approval (`voided`,
// `forward_withdrawn`, recorded in the ledger); approving it afterwards is refused, and nothing reaches the device.
// And the approval A asks for shows on the run B drives as a local one does (`waiting-approval`, an approval
// interrupt), answerable through any process: the interrupt route of A (forwarded to B, the run's driver), or A's
// operator API (decided on A, seen by B). The same for a step of an mhs.task: its interrupt names the step.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of HTTP responses are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/core/index.js';
import { openDb } from '../../src/ledger/index.js';
import { PG_URL, postgresBackend } from '../ledger/helpers.js';
import type { StoreHandle } from '../ledger/helpers.js';
import { startSimHttp } from '../helpers/sim.js';
import type { SimHttp } from '../helpers/sim.js';
import { enableSims, ledgerOf, simCounters } from './scale-out-helpers.js';
import { client, logProblems, makeToken, serve } from './serve-helpers.js';
import type { Served } from './serve-helpers.js';

const ENV = { MHS_RUN_LEASE_TTL_MS: '1500', MHS_RUN_LEASE_SKEW_MS: '200' };
const CONNECTOR = 'epa-lh';
const DEVICE = 'liquid-handler';
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ended = (s: any) => ['completed', 'failed', 'cancelled'].includes(s.status);

function aspirate(id: string, volume: number, deadlineMs?: number) {
  return {
    id,
    name: id,
    version: '1',
    nodes: [
      {
        id: 'aspirate',
        typeId: 'mhs.invoke',
        name: 'aspirate',
        position: { x: 0, y: 0 },
        inputs: {},
        config: {
          endpoint: '',
          device: DEVICE,
          capability: 'cap.liquid.aspirate.v1',
          input: { volume_ul: volume },
          ...(deadlineMs ? { deadlineMs } : {}),
        },
      },
    ],
    edges: [],
    triggers: [{ id: 'manual', type: 'manual' }],
    variables: [],
    metadata: {},
    settings: {},
  };
}

describe.skipIf(!PG_URL)('a forwarded call withdrawn while it waits for an approval', () => {
  let store: StoreHandle;
  let sim: SimHttp;
  const procs: Served[] = [];
  const tokens = { client: '', opA: '', opB: '' };

  beforeAll(async () => {
    sim = await startSimHttp('liquid-handler', ['--operator-tools']);
    store = await postgresBackend.fresh();
    procs.push(await serve(store.location, ['--no-workflows'], ENV));
    await enableSims(store.location, { lh: sim }, 'epa');
    procs.push(await serve(store.location, ['--no-workflows'], ENV));
    tokens.client = await makeToken(store.location, 'client', 'epa-client');
    tokens.opA = await makeToken(store.location, 'operator', 'epa-op-a');
    tokens.opB = await makeToken(store.location, 'operator', 'epa-op-b');
  }, 180_000);
  afterAll(async () => {
    for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) await p.stop();
    await sim?.stop();
    await store?.cleanup();
  });

  it('the holder voids the approval; approving it later is refused; nothing is sent', async () => {
    const [a, b] = procs as [Served, Served];
    const token = await makeToken(store.location, 'client');
    const op = client(b.url, await makeToken(store.location, 'operator', 'epa-op'));
    for (let i = 0; i < 200; i++) {
      const body = (await client(b.url, token).get('/v1/operator/hosts')).body;
      const holders = (body.processes as any[]).filter((p) =>
        (p.endpoints as any[]).some((e) => e.connector_id === CONNECTOR && e.endpoint_id),
      );
      if (holders.length === 1 && String(holders[0].owner).endsWith(`:${a.child.pid}`)) break;
      await pause(50);
    }
    // B waits deadline + transport margin + 5 s for the holder, then withdraws the call.
    const wf = aspirate('epa-aspirate', 5, 500);
    wf.nodes[0]!.config.endpoint = sim.endpointId;
    expect((await op.post('/v1/workflows', wf)).status).toBe(201);
    const api = client(b.url, token);
    const runId = (await api.post('/v1/runs', { workflowId: wf.id })).body.runId as string;
    const done = await api.until(runId, (s) => ['completed', 'failed', 'cancelled'].includes(s.status));
    expect(done.status).toBe('failed');
    expect(JSON.stringify(done.error)).toContain(ErrorCode.HOST_ENDPOINT_FORWARD_TIMEOUT);

    // A stops waiting on B's withdrawal notice and voids the approval it asked for.
    let mine: any[] = [];
    for (let i = 0; i < 200 && !mine.length; i++) {
      const voided = (await op.get('/v1/operator/approvals?status=voided')).body.approvals as any[];
      mine = voided.filter((x) => x.run_id === runId);
      if (!mine.length) await pause(50);
    }
    expect(mine).toHaveLength(1);
    const id = mine[0].approval_id as string;
    expect((await op.get(`/v1/operator/approvals/${id}`)).body).toMatchObject({
      status: 'voided',
      reason: 'forward_withdrawn',
    });
    expect((await op.post(`/v1/operator/approvals/${id}/approve`, {})).status).toBe(409);

    const db = await openDb(store.location);
    try {
      const rows = await db.all<any>('SELECT status, command_id FROM endpoint_requests');
      expect(rows).toEqual([{ status: 'expired', command_id: null }]);
    } finally {
      await db.close();
    }
    const { entries, verified } = await ledgerOf(store.location);
    expect(entries.filter((e) => e.kind === 'approval' && e.approval_id === id)).toMatchObject([
      { event: 'requested' },
      { event: 'voided', reason: 'forward_withdrawn', run_id: runId, node_id: 'aspirate' },
      { event: 'vote_refused', status: 'voided', decision: 'approve' },
    ]);
    expect(entries.filter((e) => e.kind === 'command.intent')).toEqual([]);
    expect((await simCounters(sim, DEVICE)).calls).toBe(0);
    expect(verified).toBe(true);
  }, 120_000);

  /** Runs `wf` through B, checks B drives it, and waits until it shows the approval A asked for. */
  const waitingOnB = async (wf: ReturnType<typeof aspirate>): Promise<{ runId: string; approvalId: string }> => {
    const [, b] = procs as [Served, Served];
    wf.nodes[0]!.config.endpoint = sim.endpointId;
    const op = client(b.url, tokens.opB);
    expect((await op.post('/v1/workflows', wf)).status).toBe(201);
    const api = client(b.url, tokens.client);
    const runId = (await api.post('/v1/runs', { workflowId: wf.id })).body.runId as string;
    // Without the relay B's run stays `running` until the call ends: this waits for the status a local call shows.
    const waiting = await api.until(runId, (s) => s.status === 'waiting-approval' || ended(s));
    expect(waiting.status).toBe('waiting-approval');
    expect(waiting.currentNodeId).toBe('aspirate');
    const db = await openDb(store.location);
    try {
      const lease = await db.get<any>('SELECT owner FROM run_leases WHERE run_id = ?', [runId]);
      expect(lease?.owner).toMatch(new RegExp(`:${b.child.pid}$`));
      const [req] = (await db.all<any>('SELECT * FROM endpoint_requests')).filter(
        (r) => JSON.parse(r.request).call?.runId === runId,
      );
      // The holder asked for it: the call was forwarded and is still pending there.
      expect(req).toMatchObject({ status: 'pending', sender: expect.stringMatching(new RegExp(`:${b.child.pid}$`)) });
    } finally {
      await db.close();
    }
    const pending = ((await op.get('/v1/operator/approvals?status=pending')).body.approvals as any[]).filter(
      (x) => x.run_id === runId,
    );
    expect(pending).toHaveLength(1);
    const asked = (await api.events(runId)).filter((e) => e.type === 'interrupt.requested');
    expect(asked.map((e) => e.payload)).toMatchObject([
      { kind: 'approval', key: `mhs:${pending[0].approval_id}`, data: { artifactType: 'mhs.approval' } },
    ]);
    return { runId, approvalId: pending[0].approval_id as string };
  };

  /** The run completed with the operator's acceptance on its log, the command executed once, the ledger verifies. */
  const completedOnce = async (runId: string, approvalId: string): Promise<void> => {
    const [, b] = procs as [Served, Served];
    const api = client(b.url, tokens.client);
    const done = await api.until(runId, ended);
    const events = await api.events(runId);
    expect(done.status, JSON.stringify(done.error ?? done)).toBe('completed');
    expect(logProblems(events)).toEqual([]);
    expect(events.filter((e) => e.type === 'interrupt.resolved')).toHaveLength(1);
    expect(events.find((e) => e.type === 'approval.received')?.payload.action).toBe('accept');
    const commandId = (done.nodeStates.aspirate.outputs as any).commandId as string;
    expect((await simCounters(sim, DEVICE)).executions[commandId]).toBe(1);
    const { entries, verified } = await ledgerOf(store.location);
    expect(entries.filter((e) => e.kind === 'command.intent' && e.run_id === runId)).toHaveLength(1);
    expect(entries.filter((e) => e.kind === 'approval' && e.approval_id === approvalId).map((e) => e.event)).toEqual([
      'requested',
      'decided',
    ]);
    expect(verified).toBe(true);
  };

  it("the approval A asks for shows on B's run; answered through A's interrupt route, the run completes", async () => {
    const [a] = procs as [Served, Served];
    const { runId, approvalId } = await waitingOnB(aspirate('epa-interrupt', 6));
    // A does not drive the run: the answer is forwarded to B, whose node votes in the shared approval store.
    const opA = client(a.url, tokens.opA);
    const res = await opA.post(`/v1/runs/${runId}/interrupts/aspirate`, { action: 'accept' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    await completedOnce(runId, approvalId);
  }, 60_000);

  it("approved in A's operator API, the decision reaches B's run", async () => {
    const [a] = procs as [Served, Served];
    const { runId, approvalId } = await waitingOnB(aspirate('epa-operator', 7));
    const opA = client(a.url, tokens.opA);
    expect((await opA.post(`/v1/operator/approvals/${approvalId}/approve`, {})).status).toBe(200);
    await completedOnce(runId, approvalId);
  }, 60_000);

  it("a forwarded mhs.task step's approval shows on B's run naming the step; answered through A's route", async () => {
    const [a, b] = procs as [Served, Served];
    const step = { id: 'draw', endpoint: sim.endpointId, device: DEVICE, capability: 'cap.liquid.aspirate.v1' };
    const wf = aspirate('epa-task', 8);
    wf.nodes[0] = {
      ...wf.nodes[0]!,
      id: 'task',
      name: 'task',
      typeId: 'mhs.task',
      config: { steps: [{ ...step, input: { volume_ul: 8 } }] } as any,
    };
    expect((await client(b.url, tokens.opB).post('/v1/workflows', wf)).status).toBe(201);
    const api = client(b.url, tokens.client);
    const runId = (await api.post('/v1/runs', { workflowId: wf.id })).body.runId as string;
    const waiting = await api.until(runId, (s) => s.status === 'waiting-approval' || ended(s));
    expect(waiting.status).toBe('waiting-approval');
    expect(waiting.currentNodeId).toBe('task');
    const pending = (
      (await client(a.url, tokens.opA).get('/v1/operator/approvals?status=pending')).body.approvals as any[]
    ).filter((x) => x.run_id === runId);
    expect(pending).toHaveLength(1);
    const asked = (await api.events(runId)).filter((e) => e.type === 'interrupt.requested');
    expect(asked.map((e) => e.payload)).toMatchObject([
      {
        kind: 'approval',
        key: `mhs:${pending[0].approval_id}`,
        data: { artifactType: 'mhs.approval', stepIndex: 0, stepId: 'draw' },
      },
    ]);
    const res = await client(a.url, tokens.opA).post(`/v1/runs/${runId}/interrupts/task`, { action: 'accept' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const done = await api.until(runId, ended);
    expect(done.status, JSON.stringify(done.error ?? done)).toBe('completed');
    const events = await api.events(runId);
    expect(events.filter((e) => e.type === 'interrupt.resolved').map((e) => e.payload.interruptId)).toEqual([
      `mhs:${pending[0].approval_id}`,
    ]);
    const commandId = (done.nodeStates.task.outputs as any).steps[0].commandId as string;
    expect((await simCounters(sim, DEVICE)).executions[commandId]).toBe(1);
  }, 60_000);
});
