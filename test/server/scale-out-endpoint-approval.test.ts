// Issue 19, a forwarded call waiting for a human approval longer than its sender waits: two real `mhs-host serve`
// processes on one real PostgreSQL store (a schema of its own; skipped without MHS_TEST_PG_URL), a real liquid-handler
// simulator whose aspirate needs an operator's approval. A holds the endpoint; a run B drives makes the call with a
// short deadline, so B withdraws it before anyone decides. A stops waiting and voids the approval (`voided`,
// `forward_withdrawn`, recorded in the ledger); approving it afterwards is refused, and nothing reaches the device.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of HTTP responses are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/core/index.js';
import { openDb } from '../../src/ledger/index.js';
import { PG_URL, postgresBackend } from '../ledger/helpers.js';
import type { StoreHandle } from '../ledger/helpers.js';
import { startSimHttp } from '../helpers/sim.js';
import type { SimHttp } from '../helpers/sim.js';
import { enableSims, ledgerOf, simCounters } from './scale-out-helpers.js';
import { client, makeToken, serve } from './serve-helpers.js';
import type { Served } from './serve-helpers.js';

const ENV = { MHS_RUN_LEASE_TTL_MS: '1500', MHS_RUN_LEASE_SKEW_MS: '200' };
const CONNECTOR = 'epa-lh';
const DEVICE = 'liquid-handler';
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!PG_URL)('a forwarded call withdrawn while it waits for an approval', () => {
  let store: StoreHandle;
  let sim: SimHttp;
  const procs: Served[] = [];

  beforeAll(async () => {
    sim = await startSimHttp('liquid-handler', ['--operator-tools']);
    store = await postgresBackend.fresh();
    procs.push(await serve(store.location, ['--no-workflows'], ENV));
    await enableSims(store.location, { lh: sim }, 'epa');
    procs.push(await serve(store.location, ['--no-workflows'], ENV));
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
    const wf = {
      id: 'epa-aspirate',
      name: 'epa-aspirate',
      version: '1',
      nodes: [
        {
          id: 'aspirate',
          typeId: 'mhs.invoke',
          name: 'aspirate',
          position: { x: 0, y: 0 },
          inputs: {},
          // B waits deadline + transport margin + 5 s for the holder, then withdraws the call.
          config: {
            endpoint: sim.endpointId,
            device: DEVICE,
            capability: 'cap.liquid.aspirate.v1',
            input: { volume_ul: 5 },
            deadlineMs: 500,
          },
        },
      ],
      edges: [],
      triggers: [{ id: 'manual', type: 'manual' }],
      variables: [],
      metadata: {},
      settings: {},
    };
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
});
