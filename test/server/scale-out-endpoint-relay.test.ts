// Issue 19, what crosses from a forwarded call's caller to the endpoint's holder besides the call: two real
// `mhs-host serve` processes on one real PostgreSQL store (a schema of its own; skipped without MHS_TEST_PG_URL), two
// real HTTP simulators (a thermostat answering every call after 2 s, a liquid handler whose aspirate needs an
// operator's approval). A holds both endpoints; every run here is driven by B, so each governed call is forwarded.
// - the session disclosure A shows is shown on B's surface (the run's log) before the call (HOST-003);
// - a run cancelled on B while A waits for the call's approval withdraws it: the request expires, A voids the
//   approval, nothing is journaled or sent;
// - a withdrawal whose notice A never got (the row changed without NOTIFY) is seen by A in the store: it voids the
//   approval within its approval poll instead of waiting out the approval timeout;
// - a run cancelled on B after A sent the command: A aborts it as a local caller's abort would (recorded
//   `command.unknown`, or `command.not_sent` if the abort reached the lane first), never resent.
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

const ENV = { MHS_RUN_LEASE_TTL_MS: '1500', MHS_RUN_LEASE_SKEW_MS: '200', MHS_APPROVAL_POLL_MS: '200' };
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ended = (s: any) => ['completed', 'failed', 'cancelled'].includes(s.status);

async function requestsOf(location: string, runId: string): Promise<any[]> {
  const db = await openDb(location);
  try {
    const rows = await db.all<any>('SELECT * FROM endpoint_requests ORDER BY created_at');
    return rows.filter((r) => JSON.parse(r.request).call?.runId === runId);
  } finally {
    await db.close();
  }
}

function workflow(id: string, typeId: 'mhs.invoke' | 'mhs.task', call: Record<string, unknown>) {
  return {
    id,
    name: id,
    version: '1',
    nodes: [
      {
        id: 'call',
        typeId,
        name: 'call',
        position: { x: 0, y: 0 },
        inputs: {},
        config: typeId === 'mhs.task' ? { steps: [{ id: 's0', ...call }] } : call,
      },
    ],
    edges: [],
    triggers: [{ id: 'manual', type: 'manual' }],
    variables: [],
    metadata: {},
    settings: {},
  };
}

describe.skipIf(!PG_URL)('a forwarded call: disclosure and withdrawal reach the endpoint holder', () => {
  let store: StoreHandle;
  let thermo: SimHttp;
  let lh: SimHttp;
  const procs: Served[] = [];
  let api: ReturnType<typeof client>;
  let op: ReturnType<typeof client>;

  beforeAll(async () => {
    [thermo, lh] = await Promise.all([
      startSimHttp('thermostat', ['--latency-ms', '2000']),
      startSimHttp('liquid-handler', ['--operator-tools']),
    ]);
    store = await postgresBackend.fresh();
    procs.push(await serve(store.location, ['--no-workflows'], ENV));
    await enableSims(store.location, { thermo, lh }, 'epr');
    procs.push(await serve(store.location, ['--no-workflows'], ENV));
    const [a, b] = procs as [Served, Served];
    api = client(b.url, await makeToken(store.location, 'client'));
    op = client(b.url, await makeToken(store.location, 'operator', 'epr-op'));
    for (let i = 0; i < 200; i++) {
      const held = ((await api.get('/v1/operator/hosts')).body.processes as any[])
        .filter((p) => String(p.owner).endsWith(`:${a.child.pid}`))
        .flatMap((p) => (p.endpoints as any[]).filter((e) => e.endpoint_id));
      if (held.length === 2) break;
      await pause(50);
    }
  }, 180_000);
  afterAll(async () => {
    for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) await p.stop();
    await Promise.all([thermo?.stop(), lh?.stop()]);
    await store?.cleanup();
  });

  const start = async (wf: ReturnType<typeof workflow>): Promise<string> => {
    expect((await op.post('/v1/workflows', wf)).status).toBe(201);
    return (await api.post('/v1/runs', { workflowId: wf.id })).body.runId as string;
  };

  /** The approval A asked for a call of `runId`, once pending. */
  const pendingApproval = async (runId: string): Promise<string> => {
    for (let i = 0; i < 400; i++) {
      const pending = ((await op.get('/v1/operator/approvals?status=pending')).body.approvals as any[]).filter(
        (x) => x.run_id === runId,
      );
      if (pending.length) return pending[0].approval_id as string;
      await pause(50);
    }
    throw new Error(`no approval was asked for run ${runId}`);
  };

  /** The approval's status once it is no longer pending (a bounded wait: A's poll is 200 ms, its timeout minutes). */
  const decided = async (id: string): Promise<any> => {
    for (let i = 0; i < 200; i++) {
      const a = (await op.get(`/v1/operator/approvals/${id}`)).body;
      if (a.status !== 'pending') return a;
      await pause(50);
    }
    return (await op.get(`/v1/operator/approvals/${id}`)).body;
  };

  it('the disclosure A shows before the call is shown on the surface of B, where the run is', async () => {
    const runId = await start(
      workflow('epr-disclose', 'mhs.invoke', {
        endpoint: thermo.endpointId,
        device: 'thermostat',
        capability: 'cap.thermal.setpoint.v1',
        input: { setpoint_c: 24 },
      }),
    );
    const done = await api.until(runId, ended);
    expect(done.status, JSON.stringify(done.error ?? done)).toBe('completed');
    const [req] = await requestsOf(store.location, runId);
    expect(req).toMatchObject({ status: 'applied', disclosure_ack: JSON.stringify({ shown: true }) });
    const shown = (await api.events(runId)).filter(
      (e: any) => e.type === 'log.appended' && e.payload?.fields?.disclosure,
    ) as any[];
    expect(shown).toHaveLength(1);
    expect(shown[0].payload.fields.disclosure).toMatchObject({
      surface: 'workflow',
      endpoint_id: thermo.endpointId,
      device_id: 'thermostat',
      safety_notice: 'MHS.SAFETY.NOT_CERTIFIED',
    });
    // Recorded once, by the holder, and before the command's intent.
    const { entries } = await ledgerOf(store.location);
    const mine = entries.filter((e) => e.run_id === runId);
    expect(mine.filter((e) => e.kind === 'disclosure.shown')).toHaveLength(1);
    expect(mine.findIndex((e) => e.kind === 'disclosure.shown')).toBeLessThan(
      mine.findIndex((e) => e.kind === 'command.intent'),
    );
  }, 60_000);

  it('a run cancelled on B while A waits for the approval: withdrawn, the approval voided, nothing sent', async () => {
    // Without the withdrawal B would wait the step's deadline (60 s) and more before the run could end.
    const runId = await start(
      workflow('epr-cancel-approval', 'mhs.task', {
        endpoint: lh.endpointId,
        device: 'liquid-handler',
        capability: 'cap.liquid.aspirate.v1',
        input: { volume_ul: 5 },
        deadlineMs: 60_000,
      }),
    );
    const approvalId = await pendingApproval(runId);
    expect((await api.post(`/v1/runs/${runId}/cancel`, { reason: 'operator gave up' })).status).toBeLessThan(300);
    expect((await api.until(runId, ended)).status).toBe('cancelled');
    expect((await requestsOf(store.location, runId)).map((r) => [r.status, r.command_id])).toEqual([['expired', null]]);
    expect(await decided(approvalId)).toMatchObject({ status: 'voided', reason: 'forward_withdrawn' });
    const { entries } = await ledgerOf(store.location);
    expect(entries.filter((e) => e.kind === 'command.intent' && e.run_id === runId)).toEqual([]);
    expect((await simCounters(lh, 'liquid-handler')).calls).toBe(0);
  }, 45_000);

  it('a withdrawal whose notice A missed: A sees it in the store and voids the approval', async () => {
    const runId = await start(
      workflow('epr-missed-notice', 'mhs.task', {
        endpoint: lh.endpointId,
        device: 'liquid-handler',
        capability: 'cap.liquid.aspirate.v1',
        input: { volume_ul: 6 },
        deadlineMs: 60_000,
      }),
    );
    const approvalId = await pendingApproval(runId);
    // Withdrawn as its sender withdraws it, but without the NOTIFY: what a holder whose listen connection was down sees.
    const db = await openDb(store.location);
    try {
      const { changes } = await db.run(
        `UPDATE endpoint_requests SET status = 'expired' WHERE status = 'pending' AND request LIKE ?`,
        [`%${runId}%`],
      );
      expect(changes).toBe(1);
    } finally {
      await db.close();
    }
    expect(await decided(approvalId)).toMatchObject({ status: 'voided', reason: 'forward_withdrawn' });
    // B sees its call withdrawn (nothing sent) and its run fails at once.
    const done = await api.until(runId, ended);
    expect(done.status).toBe('failed');
    expect((await simCounters(lh, 'liquid-handler')).calls).toBe(0);
  }, 45_000);

  it('a run cancelled on B once A sent the command: A aborts it as a local abort, never resent', async () => {
    const runId = await start(
      workflow('epr-cancel-sent', 'mhs.task', {
        endpoint: thermo.endpointId,
        device: 'thermostat',
        capability: 'cap.thermal.setpoint.v1',
        input: { setpoint_c: 26 },
      }),
    );
    let sent: any;
    for (let i = 0; i < 400 && !sent; i++) {
      sent = (await requestsOf(store.location, runId)).find((r) => r.status === 'sent');
      if (!sent) await pause(25);
    }
    expect(sent?.command_id).toBeTruthy();
    // The claim journals the intent just before the send; the simulator's 2 s latency keeps the command in flight.
    await pause(500);
    expect((await api.post(`/v1/runs/${runId}/cancel`, { reason: 'stop' })).status).toBeLessThan(300);
    expect((await api.until(runId, ended)).status).toBe('cancelled');

    let row: any;
    for (let i = 0; i < 200; i++) {
      [row] = await requestsOf(store.location, runId);
      if (row.status !== 'sent') break;
      await pause(50);
    }
    expect(row.cancelled_at).not.toBeNull();
    expect(row.status).toBe('failed');
    const code = JSON.parse(row.result).code as string;
    expect([ErrorCode.OUTCOME_UNKNOWN, ErrorCode.TRANSPORT_TIMEOUT_PRESEND]).toContain(code);
    const { entries, verified } = await ledgerOf(store.location);
    const cmd = entries.filter((e) => e.command_id === sent.command_id);
    expect(cmd.filter((e) => e.kind === 'command.intent')).toHaveLength(1);
    // The local rule: sent, its outcome is unknown until reconciled; aborted in the lane, recorded not sent.
    expect(
      cmd.some((e) => e.kind === (code === ErrorCode.OUTCOME_UNKNOWN ? 'command.unknown' : 'command.not_sent')),
    ).toBe(true);
    const c = await simCounters(thermo, 'thermostat');
    expect(c.executions[sent.command_id] ?? 0).toBeLessThanOrEqual(1);
    expect(verified).toBe(true);
  }, 45_000);
});
