// Issue 19, what crosses from a forwarded call's caller to the endpoint's holder besides the call: two real
// `mhs-host serve` processes on one real PostgreSQL store (a schema of its own; skipped without MHS_TEST_PG_URL), two
// real HTTP simulators (a thermostat answering every call after 2 s, a liquid handler whose aspirate needs an
// operator's approval). A holds both endpoints; every run here is driven by B, so each governed call is forwarded.
// - the session disclosure A shows is shown on B's surface (the run's log) before the call (HOST-003);
// - a run cancelled on B while A waits for the call's approval (an `mhs.task` step, an `mhs.invoke` node) withdraws
//   it: B's node voids the approval (or A does, once the request expires), nothing is journaled or sent;
// - a withdrawal whose notice A never got (the row changed without NOTIFY) is seen by A in the store: it voids the
//   approval within its approval poll instead of waiting out the approval timeout;
// - a run cancelled on B after A sent the command: A aborts it as a local caller's abort would (recorded
//   `command.unknown`, or `command.not_sent` if the abort reached the lane first), never resent;
// - a run cancelled on B while A's claimed command still waits in the device's lane (behind a read the third
//   simulator never answers): A drops it from the lane at once, recorded `command.not_sent`, nothing sent.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of HTTP responses are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/core/index.js';
import { openDb } from '../../src/ledger/index.js';
import { PG_URL, postgresBackend } from '../ledger/helpers.js';
import type { StoreHandle } from '../ledger/helpers.js';
import { RealClock } from '../../src/core/index.js';
import { openLedger } from '../../src/ledger/index.js';
import { openConnectorStore } from '../../src/policy/connector-store.js';
import { createEnablement } from '../../src/policy/enablement.js';
import { callMhs, connectMcpClient, startSimHttp } from '../helpers/sim.js';
import { capabilityToolName } from '../../src/mhs/tool-names.js';
import { call, gatewayHttp } from '../gateway/gateway-helpers.js';
import type { SimHttp } from '../helpers/sim.js';
import { enableSims, ledgerOf, simCounters } from './scale-out-helpers.js';
import { client, makeToken, serve } from './serve-helpers.js';
import type { Served } from './serve-helpers.js';

// A holds every endpoint here: no spreading (test/server/scale-out-endpoint-spread.test.ts covers it).
const ENV = {
  MHS_RUN_LEASE_TTL_MS: '1500',
  MHS_RUN_LEASE_SKEW_MS: '200',
  MHS_APPROVAL_POLL_MS: '200',
  MHS_ENDPOINT_SPREAD: 'off',
};
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
  let thermo2: SimHttp;
  let stall: SimHttp;
  const procs: Served[] = [];
  let api: ReturnType<typeof client>;
  let op: ReturnType<typeof client>;

  beforeAll(async () => {
    [thermo, lh, thermo2, stall] = await Promise.all([
      startSimHttp('thermostat', ['--latency-ms', '2000']),
      startSimHttp('liquid-handler', ['--operator-tools']),
      startSimHttp('thermostat', ['--latency-ms', '2000']),
      // Its first capability call is never answered: what keeps the device's lane busy.
      startSimHttp('thermostat', ['--stall', '1']),
    ]);
    store = await postgresBackend.fresh();
    procs.push(await serve(store.location, ['--no-workflows'], ENV));
    await enableSims(store.location, { thermo, lh, thermo2, stall }, 'epr');
    // B's MCP gateway waits 1.5 s for an approval, then answers MHS.HOST.APPROVAL_REQUIRED.
    procs.push(await serve(store.location, ['--no-workflows', '--mcp-approval-wait', '1500'], ENV));
    const [a, b] = procs as [Served, Served];
    api = client(b.url, await makeToken(store.location, 'client'));
    op = client(b.url, await makeToken(store.location, 'operator', 'epr-op'));
    for (let i = 0; i < 200; i++) {
      const held = ((await api.get('/v1/operator/hosts')).body.processes as any[])
        .filter((p) => String(p.owner).endsWith(`:${a.child.pid}`))
        .flatMap((p) => (p.endpoints as any[]).filter((e) => e.endpoint_id));
      if (held.length === 4) break;
      await pause(50);
    }
  }, 180_000);
  afterAll(async () => {
    for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) await p.stop();
    await Promise.all([thermo?.stop(), lh?.stop(), thermo2?.stop(), stall?.stop()]);
    await store?.cleanup();
  });

  const b = () => procs[1]!;

  const start = async (wf: ReturnType<typeof workflow>, via = api): Promise<string> => {
    expect((await op.post('/v1/workflows', wf)).status).toBe(201);
    return (await via.post('/v1/runs', { workflowId: wf.id })).body.runId as string;
  };

  /** Which connectors each process holds, by the last digits of its owner id (the pid). */
  const holders = async (): Promise<Record<string, string>> => {
    const out: Record<string, string> = {};
    for (const p of (await api.get('/v1/operator/hosts')).body.processes as any[])
      for (const e of p.endpoints as any[]) out[e.connector_id] = String(p.owner).split(':').at(-1)!;
    return out;
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
    // B's task node voids the step's approval (run_cancelled, as a local task does) and withdraws the call: withdrawn
    // before A saw the void (A voids it `forward_withdrawn` unless B's void came first), or refused by A's gate once it
    // saw it; either way before any intent.
    const [req] = await requestsOf(store.location, runId);
    expect(req.command_id).toBeNull();
    expect(
      req.status === 'expired' ||
        (req.status === 'failed' && JSON.parse(req.result).code === ErrorCode.HOST_APPROVAL_DENIED),
      JSON.stringify(req),
    ).toBe(true);
    expect(['forward_withdrawn', 'run_cancelled']).toContain((await decided(approvalId)).reason);
    expect((await decided(approvalId)).status).toBe('voided');
    const { entries } = await ledgerOf(store.location);
    expect(entries.filter((e) => e.kind === 'command.intent' && e.run_id === runId)).toEqual([]);
    // No command exists: a withdrawal is recorded, not sent.
    if (req.status === 'expired')
      expect(entries.filter((e) => e.kind === 'error' && e.run_id === runId)).toMatchObject([
        {
          phase: 'forward_withdrawn',
          sent: false,
          executed: false,
          error: { mhs_code: ErrorCode.TRANSPORT_TIMEOUT_PRESEND },
        },
      ]);
    expect((await simCounters(lh, 'liquid-handler')).calls).toBe(0);
  }, 45_000);

  it('an mhs.invoke node of a run cancelled on B while A waits for its approval: the call is withdrawn too', async () => {
    // Its approval is A's: B's node knows it from A's notice (relayed as a local approval event) or the store.
    const runId = await start(
      workflow('epr-cancel-invoke', 'mhs.invoke', {
        endpoint: lh.endpointId,
        device: 'liquid-handler',
        capability: 'cap.liquid.aspirate.v1',
        input: { volume_ul: 4 },
        deadlineMs: 60_000,
      }),
    );
    const approvalId = await pendingApproval(runId);
    expect((await api.post(`/v1/runs/${runId}/cancel`, { reason: 'operator gave up' })).status).toBeLessThan(300);
    expect((await api.until(runId, ended)).status).toBe('cancelled');
    // B voids the approval (run_cancelled, as a local node does) and withdraws the call: withdrawn before A saw the
    // void, or refused by A's gate once it saw it (approval voided); either way before any intent.
    const [req] = await requestsOf(store.location, runId);
    expect(
      req.status === 'expired' ||
        (req.status === 'failed' && JSON.parse(req.result).code === ErrorCode.HOST_APPROVAL_DENIED),
      JSON.stringify(req),
    ).toBe(true);
    expect((await decided(approvalId)).status).toBe('voided');
    const { entries } = await ledgerOf(store.location);
    expect(entries.filter((e) => e.kind === 'command.intent' && e.run_id === runId)).toEqual([]);
  }, 30_000);

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

  it("an agent on B's gateway stops waiting for an approval: so does A, and the approval stays pending", async () => {
    const agent = await gatewayHttp(b().url, await makeToken(store.location, 'agent', 'epr-bot'), '2026-07-28');
    let result: Awaited<ReturnType<typeof call>>;
    try {
      // Without the approval wait reaching A, B would wait for A's answer for the call's deadline (30 s) and more.
      result = await call(agent, capabilityToolName('liquid-handler', 'cap.liquid.aspirate.v1'), { volume_ul: 7 });
    } finally {
      await agent.close();
    }
    expect(result.isError).toBe(true);
    expect(result.text).toContain(ErrorCode.HOST_APPROVAL_REQUIRED);
    const db = await openDb(store.location);
    let rows: any[];
    try {
      rows = (await db.all<any>('SELECT * FROM endpoint_requests')).filter((r) => {
        const c = JSON.parse(r.request).call;
        return c?.capabilityId === 'cap.liquid.aspirate.v1' && !c.runId;
      });
    } finally {
      await db.close();
    }
    expect(rows.map((r) => [r.status, JSON.parse(r.result).code])).toEqual([
      ['failed', ErrorCode.HOST_APPROVAL_REQUIRED],
    ]);
    expect(rows[0].approval_wait_ended_at).not.toBeNull();
    // As after a local caller's approval wait: still pending, a retry with the same key would reuse it (HOST-041).
    const id = JSON.parse(rows[0].result).details.approval_id as string;
    expect((await op.get(`/v1/operator/approvals/${id}`)).body.status).toBe('pending');
    expect((await op.post(`/v1/operator/approvals/${id}/deny`, {})).status).toBeLessThan(300);
    expect((await simCounters(lh, 'liquid-handler')).calls).toBe(0);
  }, 30_000);

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

  it("a run cancelled on B while A's claimed command waits in the device's lane: dropped there, not sent", async () => {
    const [a] = procs as [Served, Served];
    const apiA = client(a.url, await makeToken(store.location, 'client', 'epr-lane'));
    // A read A makes itself occupies the device's slot of A's command lane: the simulator never answers it.
    const reader = await start(
      workflow('epr-lane-read', 'mhs.task', {
        endpoint: stall.endpointId,
        device: 'thermostat',
        capability: 'cap.thermal.read.v1',
        input: {},
        deadlineMs: 25_000,
      }),
      apiA,
    );
    let read: any;
    for (let i = 0; i < 400 && !read; i++) {
      read = (await ledgerOf(store.location)).entries.find((e) => e.kind === 'command.intent' && e.run_id === reader);
      if (!read) await pause(25);
    }
    expect(read).toBeTruthy();
    // B's setpoint is forwarded; A claims it (intent journaled) and queues it behind the read.
    const runId = await start(
      workflow('epr-lane-setpoint', 'mhs.task', {
        endpoint: stall.endpointId,
        device: 'thermostat',
        capability: 'cap.thermal.setpoint.v1',
        input: { setpoint_c: 27 },
      }),
    );
    let sent: any;
    for (let i = 0; i < 400 && !sent; i++) {
      sent = (await requestsOf(store.location, runId)).find((r) => r.status === 'sent');
      if (!sent) await pause(25);
    }
    expect(sent?.command_id).toBeTruthy();
    expect((await api.post(`/v1/runs/${runId}/cancel`, { reason: 'stop' })).status).toBeLessThan(300);
    expect((await api.until(runId, ended)).status).toBe('cancelled');
    // The read is still unanswered (25 s deadline): only an abort that reaches the queued command settles it now.
    let row: any;
    for (let i = 0; i < 200; i++) {
      [row] = await requestsOf(store.location, runId);
      if (row.status !== 'sent') break;
      await pause(50);
    }
    expect(row.cancelled_at).not.toBeNull();
    expect([row.status, JSON.parse(row.result ?? 'null')?.code]).toEqual([
      'failed',
      ErrorCode.TRANSPORT_TIMEOUT_PRESEND,
    ]);
    const { entries, verified } = await ledgerOf(store.location);
    const cmd = entries.filter((e) => e.command_id === sent.command_id).map((e) => e.kind);
    expect(cmd).toEqual(['command.intent', 'command.not_sent']);
    expect((await simCounters(stall, 'thermostat')).executions[sent.command_id] ?? 0).toBe(0);
    expect(verified).toBe(true);
    // The read's run is cancelled too (its task's abort ends the unanswered call).
    expect((await apiA.post(`/v1/runs/${reader}/cancel`, { reason: 'done' })).status).toBeLessThan(300);
    expect((await apiA.until(reader, ended)).status).toBe('cancelled');
  }, 45_000);

  it('an evidence export on B collects the bundles of the endpoints A holds, through A', async () => {
    const [a, b] = procs as [Served, Served];
    // B ran tasks on both endpoints above: its export collects their bundles now.
    const res = await fetch(`${b.url}/v1/operator/ledger/export`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await makeToken(store.location, 'operator', 'epr-export')}` },
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    const { entries, verified } = await ledgerOf(store.location);
    for (const sim of [thermo, lh, stall]) {
      const exported = entries.filter((e) => e.kind === 'evidence.export' && e.endpoint_id === sim.endpointId);
      expect(exported).toHaveLength(1);
      // The endpoint's own bundle: its chain holds the exported head (the thermostat's may have grown since, as the
      // command aborted above is reconciled).
      const c = await connectMcpClient({ mcpUrl: sim.mcpUrl });
      try {
        const bundle = (await callMhs(c, 'mhs__evidence', { action: 'export' })).body as any;
        expect(exported[0]!.genesis_digest).toBe(bundle.genesis_digest);
        expect((bundle.entries as any[]).map((e) => e.digest)).toContain(exported[0]!.head_digest);
      } finally {
        await c.close();
      }
    }
    // Read through A, asked by B.
    const db = await openDb(store.location);
    try {
      const reads = (await db.all<any>('SELECT * FROM endpoint_requests')).filter(
        (r) => JSON.parse(r.request).name === 'mhs__evidence',
      );
      expect(reads).toHaveLength(3);
      for (const r of reads) {
        expect(r.status).toBe('applied');
        expect(r.sender).toMatch(new RegExp(`:${b.child.pid}$`));
        expect(r.applied_by).toMatch(new RegExp(`:${a.child.pid}$`));
      }
    } finally {
      await db.close();
    }
    expect(verified).toBe(true);
  }, 45_000);

  it('a holder that lost the endpoint (SIGSTOP past its lease) records no evidence of it when it wakes', async () => {
    const [a, b] = procs as [Served, Served];
    const apiA = client(a.url, await makeToken(store.location, 'client', 'epr-a'));
    // A task A drives on the endpoint it holds leaves that endpoint's bundle to collect at its detach.
    const runId = await start(
      workflow('epr-fence-evidence', 'mhs.task', {
        endpoint: thermo2.endpointId,
        device: 'thermostat',
        capability: 'cap.thermal.setpoint.v1',
        input: { setpoint_c: 22 },
      }),
      apiA,
    );
    expect((await apiA.until(runId, ended)).status).toBe('completed');
    expect((await requestsOf(store.location, runId)).length).toBe(0); // A made the call itself
    process.kill(a.child.pid!, 'SIGSTOP');
    try {
      for (let i = 0; i < 400 && (await holders())['epr-thermo2'] !== String(b.child.pid); i++) await pause(50);
      expect((await holders())['epr-thermo2']).toBe(String(b.child.pid));
    } finally {
      process.kill(a.child.pid!, 'SIGCONT');
    }
    // A finds the lease taken over, detaches the endpoint and tries to store its bundle: the fence refuses the entry.
    const refused = () => /connector epr-thermo2 has no lease held by [^;\n]*(?!; this process)["\n]/.test(a.output());
    for (let i = 0; i < 400 && !refused(); i++) await pause(50);
    expect(refused(), a.output().slice(-3000)).toBe(true);
    const { entries, verified } = await ledgerOf(store.location);
    expect(entries.filter((e) => e.kind === 'evidence.export' && e.endpoint_id === thermo2.endpointId)).toEqual([]);
    // Nor its bundle: the package export takes each endpoint's latest stored bundle, so none may be left behind.
    const db = await openDb(store.location);
    try {
      const rows = await db.all<any>('SELECT id FROM ledger_evidence_bundles WHERE endpoint_id = ?', [
        thermo2.endpointId,
      ]);
      expect(rows).toEqual([]);
    } finally {
      await db.close();
    }
    expect(verified).toBe(true);
  }, 45_000);

  it('a run taken over with a command on a disabled endpoint is not held up waiting for its takeover', async () => {
    const [a, b] = procs as [Served, Served];
    // B holds every endpoint now (it took them over from the paused A) and drives runs started on it.
    const runId = await start(
      workflow('epr-disabled', 'mhs.invoke', {
        endpoint: thermo2.endpointId,
        device: 'thermostat',
        capability: 'cap.thermal.setpoint.v1',
        input: { setpoint_c: 23 },
      }),
    );
    let intent: any;
    for (let i = 0; i < 400 && !intent; i++) {
      intent = (await ledgerOf(store.location)).entries.find((e) => e.kind === 'command.intent' && e.run_id === runId);
      if (!intent) await pause(25);
    }
    expect(intent?.connector_id).toBe('epr-thermo2');
    // Disabled with the command in flight, then B dies: no process will take that endpoint over.
    const db = await openDb(store.location);
    try {
      const clock = new RealClock();
      const enablement = createEnablement({
        store: await openConnectorStore(db, { clock }),
        ledger: await openLedger(db, { clock }),
      });
      await enablement.disable('epr-thermo2', { id: 'test-setup', via: 'test' });
    } finally {
      await db.close();
    }
    await b.kill();
    // A takes the run over; its node's reconciliation does not wait 60 s for a takeover that cannot come.
    const apiA = client(a.url, await makeToken(store.location, 'client', 'epr-a2'));
    const done = await apiA.until(runId, ended);
    expect(done.status).toBe('failed');
    expect(JSON.stringify(done.error)).toContain(ErrorCode.OUTCOME_UNKNOWN);
    const { entries } = await ledgerOf(store.location);
    expect(entries.filter((e) => e.command_id === intent.command_id && e.kind === 'command.intent')).toHaveLength(1);
    expect((await simCounters(thermo2, 'thermostat')).executions[intent.command_id] ?? 0).toBeLessThanOrEqual(1);
  }, 40_000);
});
