// Guarantees (HOST-091, HOST-037): against a real simulator that executes a command and drops its reply, the
// caller sees MHS.OUTCOME.UNKNOWN with the command_id, the device gate refuses new commands with
// MHS.HOST.DEVICE_GATE_CLOSED until reconciliation, reconciliation returns the retained receipt with
// replayed:true, and the command executed exactly once. A pre-send failure (full lane) is recorded
// command.not_sent, is retryable, and is never confused with the unknown case.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ErrorCode, HostError } from '../../src/core/index.js';
import type { Engine } from '../../src/engine/index.js';
import { connectStdio, executions, openStore, startEngine } from './harness.js';
import type { Store } from './harness.js';

async function failure(p: Promise<unknown>): Promise<HostError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(HostError);
  return e as HostError;
}

describe('unknown outcomes', () => {
  let store: Store;
  let engine: Engine;
  let EP = '';
  beforeAll(async () => {
    store = await openStore();
    engine = await startEngine(store, { transportMarginMs: 300 });
    EP = (await engine.attach(await connectStdio('conveyor', ['--drop-reply', '1']))).endpointId;
  });
  afterAll(async () => {
    await engine?.stop();
    await store?.close();
  });

  test('HOST-091: dropped reply → OUTCOME.UNKNOWN, gate closed, reconciled replayed:true, executed once', async () => {
    const call = { endpointId: EP, deviceId: 'conveyor-workcell', capabilityId: 'cap.world.step.v1', deadlineMs: 500 };
    const err = await failure(engine.invoke({ ...call, input: { ticks: 3 } }));
    expect(err.code).toBe(ErrorCode.OUTCOME_UNKNOWN);
    expect(err.retryable).toBe(false);
    const commandId = err.details.command_id as string;
    expect(commandId).toMatch(/^cmd_/);
    expect(engine.pending().map((p) => p.commandId)).toEqual([commandId]);

    const refused = await failure(engine.invoke({ ...call, input: { ticks: 1 } }));
    expect(refused.code).toBe(ErrorCode.HOST_DEVICE_GATE_CLOSED);
    expect(refused.details.command_id).toBe(commandId);

    const [rec] = await engine.reconcile({ commandId });
    expect(rec).toMatchObject({ outcome: 'receipt', method: 'retry' });
    expect(rec!.receipt).toMatchObject({ command_id: commandId, status: 'completed', replayed: true });
    expect(await executions(engine, EP, 'conveyor-workcell', commandId)).toBe(1);
    expect(engine.pending()).toEqual([]);

    const kinds = (await store.ledger.byCommand(commandId)).map((e) => e.kind);
    expect(kinds).toEqual(['command.intent', 'command.unknown', 'receipt', 'reconcile']);

    const next = await engine.invoke({ ...call, input: { ticks: 1 } });
    expect(next.receipt.status).toBe('completed');
    expect(await executions(engine, EP, 'conveyor-workcell', next.commandId)).toBe(1);
  });
});

describe('pre-send failures', () => {
  let store: Store;
  let engine: Engine;
  let EP = '';
  beforeAll(async () => {
    store = await openStore();
    engine = await startEngine(store, { transportMarginMs: 300, laneMaxPending: 1 });
    EP = (await engine.attach(await connectStdio('conveyor,thermostat', ['--stall', '1']))).endpointId;
  });
  afterAll(async () => {
    await engine?.stop();
    await store?.close();
  });

  test('HOST-091 HOST-082: a full lane is MHS.LIMIT.RATE recorded command.not_sent, apart from the unknown one', async () => {
    const stalled = engine.invoke({
      endpointId: EP,
      deviceId: 'conveyor-workcell',
      capabilityId: 'cap.world.step.v1',
      input: { ticks: 1 },
      deadlineMs: 1_000,
    });
    // Wait until the stalled command holds the lane (its intent is durable and it is in flight).
    while (engine.endpoint(EP)!.laneStats().running === 0) await new Promise((r) => setImmediate(r));
    const read = { endpointId: EP, deviceId: 'thermostat', capabilityId: 'cap.thermal.read.v1', input: {} };
    const full = await failure(engine.invoke(read));
    expect(full.code).toBe(ErrorCode.LIMIT_RATE);
    expect(full.retryable).toBe(true);
    expect(full.details.sent).toBe(false);
    const notSent = full.details.command_id as string;
    expect((await store.ledger.byCommand(notSent)).map((e) => e.kind)).toEqual(['command.intent', 'command.not_sent']);

    const unknown = await failure(stalled);
    expect(unknown.code).toBe(ErrorCode.OUTCOME_UNKNOWN);
    const stalledId = unknown.details.command_id as string;
    expect((await store.ledger.byCommand(stalledId)).map((e) => e.kind)).toEqual(['command.intent', 'command.unknown']);

    // The not-sent command left no gate shut: a retry goes through. The stalled one never executed.
    const retry = await engine.invoke(read);
    expect(retry.receipt.status).toBe('completed');
    const [rec] = await engine.reconcile({ commandId: stalledId });
    expect(rec).toMatchObject({ outcome: 'not_executed' });
    expect(await executions(engine, EP, 'conveyor-workcell', stalledId)).toBe(0);
  });
});
