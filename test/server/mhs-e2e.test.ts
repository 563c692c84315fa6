// Guarantees (issue 7 §6 + acceptance), over HTTP against `mhs-host serve` with real simulator endpoints:
// an approval-gated mhs.invoke (R2 liquid handler) shows `waiting-approval`, is approved through the
// operator API (or by an operator through the interrupt route; a client token is refused), completes, and
// its events carry the ledger seq/digest of the receipt entry, whose intent carries runId/nodeId/traceparent.
// SIGKILL of the server while a two-endpoint workflow has a command in flight: after restart the run
// completes, each device counter shows exactly one execution per command, and the ledger verifies.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RealClock } from '../../src/core/index.js';
import { openDb, openLedger } from '../../src/ledger/index.js';
import { startMhsHost } from '../helpers/mhs-host.js';
import type { MhsHost } from '../helpers/mhs-host.js';
import { callMhs, connectMcpClient } from '../helpers/sim.js';
import type { SimHttp } from '../helpers/sim.js';
import { client, logProblems, serve } from './serve-helpers.js';
import type { Served } from './serve-helpers.js';

const clock = new RealClock();
let host: MhsHost<'thermo' | 'conveyor' | 'lh' | 'stalled'>;
let sims: Record<'thermo' | 'conveyor' | 'lh' | 'stalled', SimHttp>;
let dbPath: string;
let srv: Served;
let tokens: { client: string; op: string };

const node = (id: string, typeId: string, config: Record<string, unknown>, x: number) => ({
  id,
  typeId,
  name: id,
  position: { x, y: 0 },
  config,
  inputs: {},
});
const wf = (id: string, nodes: any[]) => ({
  id,
  name: id,
  version: '1',
  nodes,
  edges: nodes.slice(1).map((n, i) => ({ id: `e${i}`, sourceNodeId: nodes[i].id, targetNodeId: n.id })),
  triggers: [{ id: 'manual', type: 'manual' }],
  variables: [],
  metadata: {},
  settings: {},
});

beforeAll(async () => {
  host = await startMhsHost({
    prefix: 'mhs-e2e',
    sims: {
      thermo: ['thermostat', ['--time-scale', '50']],
      conveyor: ['conveyor', ['--latency-ms', '1500']],
      lh: ['liquid-handler', ['--operator-tools']],
      // The first capability call is accepted and never answered; nothing executes.
      stalled: ['conveyor', ['--stall', '1']],
    },
    tokens: { 'e2e-client': 'client', 'e2e-op': 'operator' },
  });
  ({ sims, dbPath } = host);
  srv = host.srv!;
  tokens = { client: host.tokens['e2e-client']!, op: host.tokens['e2e-op']! };
  // Registering a workflow is an operator action (issue 20).
  const api = client(srv.url, tokens.op);
  const lhCall = {
    endpoint: sims.lh.endpointId,
    device: 'liquid-handler',
    capability: 'cap.liquid.aspirate.v1',
    input: { volume_ul: 50 },
  };
  expect(
    (await api.post('/v1/workflows', wf('e2e-aspirate', [node('aspirate', 'mhs.invoke', lhCall, 0)]))).status,
  ).toBe(201);
  const two = wf('e2e-two-endpoint', [
    node(
      'warm',
      'mhs.invoke',
      {
        endpoint: sims.thermo.endpointId,
        device: 'thermostat',
        capability: 'cap.thermal.setpoint.v1',
        input: { setpoint_c: 30 },
      },
      0,
    ),
    node(
      'advance',
      'mhs.invoke',
      {
        endpoint: sims.conveyor.endpointId,
        device: 'conveyor-workcell',
        capability: 'cap.world.step.v1',
        input: { ticks: 3 },
      },
      1,
    ),
    node('done', 'core.noop', {}, 2),
  ]);
  expect((await api.post('/v1/workflows', two)).status).toBe(201);
  const task = wf('e2e-task', [
    node(
      'task',
      'mhs.task',
      {
        steps: [
          {
            id: 'warm',
            endpoint: sims.thermo.endpointId,
            device: 'thermostat',
            capability: 'cap.thermal.setpoint.v1',
            input: { setpoint_c: 25 },
          },
          {
            id: 'advance',
            endpoint: sims.conveyor.endpointId,
            device: 'conveyor-workcell',
            capability: 'cap.world.step.v1',
            input: { ticks: 2 },
          },
        ],
      },
      0,
    ),
  ]);
  expect((await api.post('/v1/workflows', task)).status).toBe(201);
  const stalled = wf('e2e-stalled', [
    node(
      'advance',
      'mhs.invoke',
      {
        endpoint: sims.stalled.endpointId,
        device: 'conveyor-workcell',
        capability: 'cap.world.step.v1',
        input: { ticks: 1 },
        deadlineMs: 3_000,
      },
      0,
    ),
  ]);
  expect((await api.post('/v1/workflows', stalled)).status).toBe(201);
}, 180_000);

afterAll(async () => {
  // `srv` may be a restarted server (the SIGKILL test): stop the current one.
  if (host) host.srv = srv;
  await host?.stop();
});

const terminal = (s: Record<string, any>) => ['completed', 'failed', 'cancelled'].includes(s.status as string);

async function ledgerEntries() {
  const db = await openDb(dbPath);
  const ledger = await openLedger(db, { clock });
  return { db, ledger };
}

describe('MHS nodes over REST', () => {
  it('an R2 mhs.invoke waits for approval, is approved in the operator API, completes; events reference the receipt entry', async () => {
    const api = client(srv.url, tokens.client);
    const op = client(srv.url, tokens.op);
    const runId = (await api.post('/v1/runs', { workflowId: 'e2e-aspirate' })).body.runId as string;
    const waiting = await api.until(runId, (s) => s.status === 'waiting-approval');
    expect(waiting.currentNodeId).toBe('aspirate');
    const approvals = (await op.get('/v1/operator/approvals')).body.approvals as any[];
    const mine = approvals.find((a) => a.run_id === runId);
    expect(mine).toMatchObject({ node_id: 'aspirate', device_id: 'liquid-handler' });
    // A client token cannot decide an MHS approval through the interrupt route.
    expect((await api.post(`/v1/runs/${runId}/interrupts/aspirate`, { action: 'accept' })).body.error).toBe(
      'forbidden',
    );
    expect((await op.post(`/v1/operator/approvals/${mine.approval_id}/approve`, {})).status).toBe(200);
    const done = await api.until(runId, terminal);
    const events = await api.events(runId);
    const failures = events.filter((e) => /fail|error|unknown/i.test(e.type));
    expect(done.status, JSON.stringify(failures).slice(0, 4000)).toBe('completed');
    expect(logProblems(events)).toEqual([]);
    expect(events.find((e) => e.type === 'approval.received')?.payload.action).toBe('accept');
    const completed = events.find((e) => e.type === 'node.completed' && e.nodeId === 'aspirate')!;
    const outputs = completed.payload.outputs as any;
    expect(outputs.receipt.status).toBe('completed');
    const ref = completed.payload.ledger as { seq: number; digest: string };
    const { db, ledger } = await ledgerEntries();
    try {
      const [entry] = await ledger.range(ref.seq, ref.seq);
      expect(entry).toMatchObject({ kind: 'receipt', digest: ref.digest, command_id: outputs.commandId });
      const intent = (await ledger.byCommand(outputs.commandId as string)).find((e) => e.kind === 'command.intent')!;
      expect(intent).toMatchObject({ run_id: runId, node_id: 'aspirate' });
      expect(String(intent.traceparent)).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
      // Run, node and command spans share one trace: the command's trace id is the run's.
      const row = await db.get<{ traceparent: string }>('SELECT traceparent FROM openwop_runs WHERE run_id = ?', [
        runId,
      ]);
      expect(String(intent.traceparent).split('-')[1]).toBe(row!.traceparent.split('-')[1]);
    } finally {
      await db.close();
    }
  });

  it('an operator may decide the same wait through the interrupt route', async () => {
    const api = client(srv.url, tokens.client);
    const op = client(srv.url, tokens.op);
    const runId = (await api.post('/v1/runs', { workflowId: 'e2e-aspirate' })).body.runId as string;
    await api.until(runId, (s) => s.status === 'waiting-approval');
    expect((await op.post(`/v1/runs/${runId}/interrupts/aspirate`, { action: 'accept' })).status).toBe(200);
    expect((await api.until(runId, terminal)).status).toBe('completed');
  });

  it('mhs.task runs a two-endpoint parent action: child receipts and the parent_action entry carry the run', async () => {
    const api = client(srv.url, tokens.client);
    const runId = (await api.post('/v1/runs', { workflowId: 'e2e-task' })).body.runId as string;
    const done = await api.until(runId, terminal);
    expect(done.status).toBe('completed');
    const out = done.nodeStates.task.outputs as any;
    expect(out.ok).toBe(true);
    expect(out.steps.map((x: any) => x.receipt.status)).toEqual(['completed', 'completed']);
    const { db, ledger } = await ledgerEntries();
    try {
      const [end] = await ledger.range(out.ledger.seq, out.ledger.seq);
      expect(end).toMatchObject({
        kind: 'parent_action',
        phase: 'end',
        task_id: out.taskId,
        digest: out.ledger.digest,
      });
      const [start] = await ledger.range(end!.parent_seq as number, end!.parent_seq as number);
      expect(start).toMatchObject({ kind: 'parent_action', phase: 'start', run_id: runId, node_id: 'task' });
    } finally {
      await db.close();
    }
    // The console is served on the same port.
    const page = await fetch(`${srv.url}/console/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    // One OpenAPI document describes the operator API too.
    const doc = (await (await fetch(`${srv.url}/v1/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/runs', '/v1/operator/approvals']));
  });

  it('cancel while the R2 call waits for approval withdraws it: the run is cancelled and nothing is sent', async () => {
    const api = client(srv.url, tokens.client);
    const total = async () => {
      const c = await connectMcpClient({ mcpUrl: sims.lh.mcpUrl });
      try {
        return (
          (await callMhs(c, 'mhs__read', { device_id: 'liquid-handler', resource: '_counters' })).body.state as any
        ).total as number;
      } finally {
        await c.close();
      }
    };
    const before = await total();
    const runId = (await api.post('/v1/runs', { workflowId: 'e2e-aspirate' })).body.runId as string;
    await api.until(runId, (s) => s.status === 'waiting-approval');
    await api.post(`/v1/runs/${runId}/cancel`, { reason: 'changed my mind' });
    const s = await api.until(runId, terminal);
    expect(s.status).toBe('cancelled');
    expect(logProblems(await api.events(runId))).toEqual([]);
    expect(await total()).toBe(before);
  });

  // Under load the kill can land between the intent's commit and its send: the command is then reconciled
  // `not_executed` and sent again as a new command (the next test makes that case certain).
  it(
    'SIGKILL during a two-endpoint run with a command in flight: restart completes it, nothing executes twice, ledger verifies',
    { timeout: 180_000 },
    async () => {
      let api = client(srv.url, tokens.client);
      const runId = (await api.post('/v1/runs', { workflowId: 'e2e-two-endpoint' })).body.runId as string;
      // Wait until the conveyor command's intent is journaled (the simulator answers only after 1.5 s).
      let inFlight = false;
      for (let i = 0; i < 200 && !inFlight; i++) {
        const { db, ledger } = await ledgerEntries();
        const head = (await ledger.head()).seq;
        inFlight = (await ledger.range(Math.max(0, head - 20))).some(
          (e) => e.kind === 'command.intent' && e.run_id === runId && e.node_id === 'advance',
        );
        await db.close();
        if (!inFlight) await api.get(`/v1/runs/${runId}/events/poll?afterSequence=1000000&timeout=50`);
      }
      expect(inFlight).toBe(true);
      await srv.kill();
      srv = await serve(dbPath, ['--no-workflows']);
      api = client(srv.url, tokens.client);
      const done = await api.until(runId, terminal);
      const events = await api.events(runId);
      const failures = events.filter((e) => /fail|error|unknown/i.test(e.type));
      expect(done.status, JSON.stringify(failures).slice(0, 4000)).toBe('completed');
      expect(logProblems(events)).toEqual([]);
      expect(events.filter((e) => e.type === 'node.started' && e.nodeId === 'warm')).toHaveLength(1);
      const cmds = {
        thermo: (done.nodeStates.warm.outputs as any).commandId as string,
        conveyor: (done.nodeStates.advance.outputs as any).commandId as string,
      };
      for (const [name, device] of [
        ['thermo', 'thermostat'],
        ['conveyor', 'conveyor-workcell'],
      ] as const) {
        const c = await connectMcpClient({ mcpUrl: sims[name].mcpUrl });
        try {
          const r = await callMhs(c, 'mhs__read', { device_id: device, resource: '_counters' });
          const state = r.body.state as Record<string, any>;
          const counts = (state.executions ?? state) as Record<string, number>;
          expect({ name, n: counts[cmds[name]] }).toEqual({ name, n: 1 });
          expect(Object.values(counts).filter((v) => typeof v === 'number' && v > 1)).toEqual([]);
        } finally {
          await c.close();
        }
      }
      const { db, ledger } = await ledgerEntries();
      try {
        expect((await ledger.verify()).ok).toBe(true);
      } finally {
        await db.close();
      }
    },
  );

  it(
    'SIGKILL while an mhs.invoke command was never executed: after its deadline it is reconciled not_executed and sent once as a new command',
    { timeout: 120_000 },
    async () => {
      let api = client(srv.url, tokens.client);
      const runId = (await api.post('/v1/runs', { workflowId: 'e2e-stalled' })).body.runId as string;
      // The intent is journaled and was sent at least 250 ms ago; the stalled endpoint never answers nor executes it.
      let intent: Record<string, any> | undefined;
      for (let i = 0; i < 200 && !intent; i++) {
        const { db, ledger } = await ledgerEntries();
        const head = (await ledger.head()).seq;
        intent = (await ledger.range(Math.max(0, head - 20))).find(
          (e) => e.kind === 'command.intent' && e.run_id === runId && clock.now() - Date.parse(e.ts) >= 250,
        );
        await db.close();
        if (!intent) await api.get(`/v1/runs/${runId}/events/poll?afterSequence=1000000&timeout=50`);
      }
      expect(intent).toBeDefined();
      await srv.kill();
      srv = await serve(dbPath, ['--no-workflows']);
      api = client(srv.url, tokens.client);
      const done = await api.until(runId, terminal);
      const events = await api.events(runId);
      const failures = events.filter((e) => /fail|error|unknown/i.test(e.type));
      expect(done.status, JSON.stringify(failures).slice(0, 4000)).toBe('completed');
      expect(logProblems(events)).toEqual([]);
      const sent = (done.nodeStates.advance.outputs as any).commandId as string;
      expect(sent).not.toBe(intent!.command_id);
      const { db, ledger } = await ledgerEntries();
      try {
        const outcomes = (await ledger.byCommand(intent!.command_id as string))
          .filter((e) => e.kind === 'reconcile')
          .map((e) => e.outcome);
        expect(outcomes.at(-1)).toBe('not_executed');
        expect(outcomes.slice(0, -1).every((o) => o === 'unknown')).toBe(true);
        expect((await ledger.verify()).ok).toBe(true);
      } finally {
        await db.close();
      }
      const c = await connectMcpClient({ mcpUrl: sims.stalled.mcpUrl });
      try {
        const r = await callMhs(c, 'mhs__read', { device_id: 'conveyor-workcell', resource: '_counters' });
        const counts = (r.body.state as Record<string, any>).executions as Record<string, number>;
        expect({ first: counts[intent!.command_id as string], rerun: counts[sent] }).toEqual({
          first: undefined,
          rerun: 1,
        });
      } finally {
        await c.close();
      }
    },
  );
});
