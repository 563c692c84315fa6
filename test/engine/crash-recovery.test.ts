// Guarantees (HOST-091, HOST-070 recovery): a host process SIGKILLed after sending a command and before its
// receipt leaves a durable intent; on restart the intent becomes MHS.OUTCOME.UNKNOWN (recorded), shuts its device
// gate, and is reconciled before the device takes another command: an executed command is settled from the
// endpoint's retention (replayed:true) and a never-executed one as not_executed. Nothing executes twice. Issue 16:
// "not executed" is never concluded before an upper bound of the send + deadline + margin, even when the intent
// was journalled long before the send and a slow conforming endpoint executes it late.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, describe, expect, test } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { ErrorCode, RealClock } from '../../src/core/index.js';
import { connect } from '../../src/mhs/connector.js';
import { entryArgs } from '../helpers/cli-entry.js';
import { REPO_ROOT, callMhs, connectMcpClient, startSimHttp } from '../helpers/sim.js';
import type { SimHttp } from '../helpers/sim.js';
import { createEngine } from '../../src/engine/index.js';
import { openLedger } from '../../src/ledger/index.js';
import type { LedgerAppend } from '../../src/ledger/index.js';
import { httpRow, openStore, recordingDb, startEngine } from './harness.js';
import type { Store } from './harness.js';

let sim: SimHttp | undefined;
let store: Store | undefined;
afterEach(async () => {
  await sim?.stop();
  await store?.close();
});

/**
 * Runs the host child until its intent is durable and `ready()` holds, then SIGKILLs it. `childArgs`: the child's
 * optional hold between intent and send, and deadline (fixtures/host-child.ts).
 */
async function crashAfterSend(
  dbPath: string,
  s: SimHttp,
  ready: (commandId: string) => Promise<boolean>,
  childArgs: string[] = [],
): Promise<string> {
  const child = spawn(
    process.execPath,
    [...entryArgs('test/engine/fixtures/host-child.ts'), dbPath, s.mcpUrl, s.endpointId, ...childArgs],
    {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const exited = new Promise((r) => child.once('exit', r));
  const lines = createInterface({ input: child.stdout! });
  let commandId = '';
  for await (const line of lines) {
    expect(line).not.toBe('RECEIPT');
    const m = /^INTENT (\S+)/.exec(line);
    if (m) {
      commandId = m[1]!;
      break;
    }
  }
  while (!(await ready(commandId))) await new Promise((r) => setImmediate(r));
  child.kill('SIGKILL');
  await exited;
  return commandId;
}

const clients = new Map<string, Client>();
afterAll(async () => {
  for (const c of clients.values()) await c.close().catch(() => undefined);
});

/** The simulator's `_counters` (executions per command, capability calls received), over one observer connection. */
async function counters(s: SimHttp): Promise<{ executions: Record<string, number>; capability_calls: number }> {
  let c = clients.get(s.mcpUrl);
  if (!c) clients.set(s.mcpUrl, (c = await connectMcpClient({ mcpUrl: s.mcpUrl })));
  const r = await callMhs(c, 'mhs__read', { device_id: 'conveyor-workcell', resource: '_counters' });
  return r.body.state as { executions: Record<string, number>; capability_calls: number };
}

/** The simulator's execution count for `commandId`. */
async function counter(s: SimHttp, commandId: string): Promise<number> {
  return (await counters(s)).executions[commandId] ?? 0;
}

describe('crash recovery', () => {
  test('HOST-091: SIGKILL after send (reply dropped); restart reconciles replayed:true, executed once', async () => {
    sim = await startSimHttp('conveyor', ['--drop-reply', '1']);
    store = await openStore();
    const s = sim;
    const commandId = await crashAfterSend(store.path, s, async (id) => (await counter(s, id)) === 1);

    const engine = await startEngine(store, { reconcileOnAttach: false });
    expect(engine.pending().map((p) => p.commandId)).toEqual([commandId]);
    const ep = await engine.attach(await connect(httpRow(s.mcpUrl, s.endpointId)));
    const gate = ep.gateOf('conveyor-workcell');
    expect(gate).toMatchObject({ status: 'shut', commandId, reason: 'unknown' });
    const refused = await engine
      .invoke({
        endpointId: s.endpointId,
        deviceId: 'conveyor-workcell',
        capabilityId: 'cap.world.step.v1',
        input: { ticks: 1 },
      })
      .catch((e: { code: string }) => e.code);
    expect(refused).toBe(ErrorCode.HOST_DEVICE_GATE_CLOSED);

    const [rec] = await engine.reconcile({ endpointId: s.endpointId });
    expect(rec).toMatchObject({ commandId, outcome: 'receipt' });
    expect(rec!.receipt).toMatchObject({ status: 'completed', replayed: true });
    expect(await counter(s, commandId)).toBe(1);
    const kinds = (await store.ledger.byCommand(commandId)).map((e) => e.kind);
    expect(kinds).toEqual(['command.intent', 'command.unknown', 'receipt', 'reconcile']);
    expect((await store.ledger.byCommand(commandId))[1]).toMatchObject({ reason: 'recovered_on_start' });

    const after = await engine.invoke({
      endpointId: s.endpointId,
      deviceId: 'conveyor-workcell',
      capabilityId: 'cap.world.step.v1',
      input: { ticks: 1 },
    });
    expect(after.receipt.status).toBe('completed');
    expect((await store.ledger.verify()).ok).toBe(true);
    await engine.stop();
  }, 90_000);

  test('HOST-091: SIGKILL after the intent with the endpoint stalling; restart reconciles on attach as not executed', async () => {
    sim = await startSimHttp('conveyor', ['--stall', '1']);
    store = await openStore();
    const s = sim;
    // The request has left the host once the intent is durable and the child is blocked on the stalled call.
    const commandId = await crashAfterSend(store.path, s, async () => true, ['0', '3000']);
    const engine = await startEngine(store);
    await engine.attach(await connect(httpRow(s.mcpUrl, s.endpointId)));
    // Issue 16: not_executed only once the command's deadline has passed since its intent.
    await engine.reconcile({ commandId, untilSettled: true });
    expect(engine.pending()).toEqual([]);
    const rec = (await store.ledger.byCommand(commandId)).filter((e) => e.kind === 'reconcile').at(-1);
    expect(rec).toMatchObject({ outcome: 'not_executed' });
    expect(await counter(s, commandId)).toBe(0);
    await engine.stop();
  }, 90_000);
  test('issue 16: an intent journalled long before its send; after a crash the slow endpoint executes it, recorded, executed once, never concluded not_executed', async () => {
    const DEADLINE = 3_000;
    const MARGIN = 300;
    // The child holds longer than deadline + margin between its durable intent and the send (a long lane wait):
    // measured from the intent, the command's deadline has passed before it even left the host.
    const HOLD = DEADLINE + MARGIN + 700;
    // A slow conforming endpoint: no record of the command until it executes it, at 0.9 × its deadline.
    sim = await startSimHttp('conveyor', ['--execute-after-ms', String(0.9 * DEADLINE), '--execute-after-nth', '1']);
    store = await openStore();
    const s = sim;
    const arrived = async (): Promise<boolean> => (await counters(s)).capability_calls === 1;
    const commandId = await crashAfterSend(store.path, s, arrived, [String(HOLD), String(DEADLINE)]);

    const engine = await startEngine(store, { transportMarginMs: MARGIN });
    await engine.attach(await connect(httpRow(s.mcpUrl, s.endpointId)));
    await engine.reconcile({ commandId, untilSettled: true });
    expect(engine.pending()).toEqual([]);
    const entries = await store.ledger.byCommand(commandId);
    expect(entries.filter((e) => e.kind === 'reconcile' && e.outcome === 'not_executed')).toEqual([]);
    expect(entries.filter((e) => e.kind === 'receipt').map((e) => e.receipt)).toEqual([
      expect.objectContaining({ status: 'completed', replayed: true }),
    ]);
    expect(entries.at(-1)).toMatchObject({ kind: 'reconcile', outcome: 'receipt' });
    expect(await counter(s, commandId)).toBe(1);
    // The device takes the next step; the first one was never run again.
    const next = await engine.invoke({
      endpointId: s.endpointId,
      deviceId: 'conveyor-workcell',
      capabilityId: 'cap.world.step.v1',
      input: { ticks: 1 },
      deadlineMs: DEADLINE,
    });
    expect(next.receipt.status).toBe('completed');
    expect(await counter(s, commandId)).toBe(1);
    expect((await store.ledger.verify()).ok).toBe(true);
    await engine.stop();
  }, 90_000);
  test('HOST-091: a running host takes over the command of another host process that crashed after its intent, reconciles it, and the device takes commands again', async () => {
    sim = await startSimHttp('conveyor', ['--drop-reply', '1']);
    store = await openStore();
    const s = sim;
    const engine = await startEngine(store);
    await engine.attach(await connect(httpRow(s.mcpUrl, s.endpointId)));
    // Another host process on the same store sends a command, which executes; the reply is lost and the process
    // dies. Its device gate is held in the store.
    const theirs = await crashAfterSend(store.path, s, async (id) => (await counter(s, id)) === 1);
    const step = () =>
      engine.invoke({
        endpointId: s.endpointId,
        deviceId: 'conveyor-workcell',
        capabilityId: 'cap.world.step.v1',
        input: { ticks: 1 },
      });
    const refused = await step().catch((e: { code: string; details: Record<string, unknown> }) => e);
    expect(refused).toMatchObject({
      code: ErrorCode.HOST_DEVICE_GATE_CLOSED,
      details: { command_id: theirs, durable: true, reconciling: true },
    });
    let kinds: string[] = [];
    while (!kinds.includes('reconcile')) {
      kinds = (await store.ledger.byCommand(theirs)).map((e) => e.kind);
      await new Promise((r) => setTimeout(r, 20));
    }
    const entries = await store.ledger.byCommand(theirs);
    expect(entries.map((e) => e.kind)).toEqual(['command.intent', 'command.unknown', 'receipt', 'reconcile']);
    expect(entries[1]).toMatchObject({ reason: 'owner_gone' });
    expect(entries[2]).toMatchObject({ receipt: { status: 'completed', replayed: true } });
    expect(entries[3]).toMatchObject({ outcome: 'receipt' });
    expect((await step()).receipt.status).toBe('completed');
    expect(await counter(s, theirs)).toBe(1);
    expect((await store.ledger.verify()).ok).toBe(true);
    await engine.stop();
  }, 90_000);
  test('HOST-091: a restarted process records command.unknown only for the endpoints it attaches', async () => {
    sim = await startSimHttp('conveyor', ['--stall', '1']);
    const other = await startSimHttp('conveyor', ['--stall', '1']);
    try {
      store = await openStore();
      const mine = await crashAfterSend(store.path, sim, async () => true, ['0', '3000']);
      // A second host process crashes on the other endpoint; it never attached the first, so it recorded nothing
      // about the first one's command.
      const theirs = await crashAfterSend(store.path, other, async () => true, ['0', '3000']);
      expect((await store.ledger.byCommand(mine)).map((e) => e.kind)).toEqual(['command.intent']);

      const engine = await startEngine(store);
      expect(
        engine
          .pending()
          .map((p) => p.commandId)
          .sort(),
      ).toEqual([mine, theirs].sort());
      await engine.attach(await connect(httpRow(sim.mcpUrl, sim.endpointId)));
      await engine.reconcile({ commandId: mine, untilSettled: true }); // issue 16: after its deadline
      expect((await store.ledger.byCommand(mine)).map((e) => e.kind).slice(0, 3)).toEqual([
        'command.intent',
        'command.unknown',
        'reconcile',
      ]);
      // Not attached here: still unsettled, still gated for whoever attaches it, and nothing recorded about it.
      expect((await store.ledger.byCommand(theirs)).map((e) => e.kind)).toEqual(['command.intent']);
      expect(engine.pending().map((p) => p.commandId)).toEqual([theirs]);

      await engine.attach(await connect(httpRow(other.mcpUrl, other.endpointId, 'mhs-test-http-2')));
      await engine.reconcile({ commandId: theirs, untilSettled: true });
      const settled = await store.ledger.byCommand(theirs);
      expect(settled.map((e) => e.kind).slice(0, 3)).toEqual(['command.intent', 'command.unknown', 'reconcile']);
      expect(settled.at(-1)).toMatchObject({ kind: 'reconcile', outcome: 'not_executed' });
      expect(settled[1]).toMatchObject({ reason: 'recovered_on_start' });
      expect(engine.pending()).toEqual([]);
      await engine.stop();
    } finally {
      await other.stop();
    }
  }, 90_000);
  test('issue 21 item 4: an unsettled intent far back in a long ledger is recovered from the side table, reconciled, never resent; the settled history is not read', async () => {
    sim = await startSimHttp('conveyor', ['--drop-reply', '1']);
    store = await openStore();
    const s = sim;
    const commandId = await crashAfterSend(store.path, s, async (id) => (await counter(s, id)) === 1);
    // A long settled history after it (another endpoint's commands, each with its final receipt).
    const settled = (n: number): LedgerAppend[] => [
      {
        kind: 'command.intent',
        command_id: `cmd_old_${n}`,
        endpoint_id: 'mhs://old/ep',
        device_id: 'd',
        effect: 'read',
      },
      { kind: 'receipt', command_id: `cmd_old_${n}`, endpoint_id: 'mhs://old/ep', receipt: { status: 'completed' } },
    ];
    for (let b = 0; b < 5_000; b += 500)
      await store.ledger.appendBatch(Array.from({ length: 500 }, (_, i) => settled(b + i)).flat());

    const sql: Array<{ sql: string; rows: number }> = [];
    const ledger = await openLedger(recordingDb(store.db, sql), { clock: new RealClock() });
    const engine = createEngine({ ledger, reconcileOnAttach: false });
    const started = await engine.start();
    expect(started.unsettled).toEqual([commandId]);
    // What the start read of the ledger: the side table and that command's own entries, by the command index.
    const reads = sql.filter((q) => /\bledger_entries\b/.test(q.sql) && /^\s*SELECT/i.test(q.sql));
    for (const q of reads) expect(q.sql).toMatch(/WHERE command_id = \?|LIMIT 1$/);
    expect(reads.reduce((a, q) => a + q.rows, 0)).toBeLessThan(10);
    expect(sql.some((q) => /FROM ledger_unsettled/.test(q.sql))).toBe(true);

    await engine.attach(await connect(httpRow(s.mcpUrl, s.endpointId)));
    const [rec] = await engine.reconcile({ endpointId: s.endpointId });
    expect(rec).toMatchObject({ commandId, outcome: 'receipt' });
    expect(rec!.receipt).toMatchObject({ status: 'completed', replayed: true });
    expect(await counter(s, commandId)).toBe(1);
    expect(engine.pending()).toEqual([]);
    await engine.stop();
    ledger.dispose();
  }, 120_000);
});
