// Guarantees: the governed call against a real stdio simulator validates locally, strips a model's `_mhs`,
// journals a durable intent with a host-allocated command_id before sending, returns the FULL receipt, records it
// verbatim, refuses what the default gate cannot allow, and a bounded lane refuses rather than queue forever.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ErrorCode, HostError, isId } from '../../src/core/index.js';
import type { Engine } from '../../src/engine/index.js';
import type { MhsConnection } from '../../src/mhs/connector.js';
import { connectStdio, executions, openStore, startEngine } from './harness.js';
import type { Store } from './harness.js';

let store: Store;
let engine: Engine;
let conn: MhsConnection;
let EP = '';

beforeAll(async () => {
  store = await openStore();
  engine = await startEngine(store);
  conn = await connectStdio('conveyor,thermostat,liquid-handler');
  EP = (await engine.attach(conn)).endpointId;
});
afterAll(async () => {
  await engine?.stop();
  await store?.close();
});

async function codeOf(p: Promise<unknown>): Promise<string> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(HostError);
  return (e as HostError).code;
}

describe('governed call', () => {
  test('HOST-033 HOST-091: intent journaled first, full receipt returned and recorded verbatim', async () => {
    const res = await engine.invoke({
      endpointId: EP,
      deviceId: 'conveyor-workcell',
      capabilityId: 'cap.world.step.v1',
      input: { ticks: 2, _mhs: { command_id: 'cmd_model_supplied', session_id: 'ses_x' } },
    });
    expect(isId('command', res.commandId)).toBe(true);
    expect(res.commandId).not.toBe('cmd_model_supplied');
    expect(res.outcome).toBe('final');
    expect(res.receipt).toMatchObject({ status: 'completed', command_id: res.commandId, replayed: false });
    expect(res.receipt.revisions.after).toBe(res.receipt.revisions.before + 1);
    expect(res.receipt.state_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(res.receipt.effects.length).toBeGreaterThan(0);
    const receiptSeq = await res.recorded;
    expect(receiptSeq).toBeGreaterThan(res.intentSeq);
    const entries = await store.ledger.byCommand(res.commandId);
    expect(entries.map((e) => e.kind)).toEqual(['command.intent', 'receipt']);
    expect(entries[0]!.seq).toBeLessThan(entries[1]!.seq);
    expect(entries[0]).toMatchObject({ input: { ticks: 2 }, traceparent: res.traceparent });
    expect(entries[1]).toMatchObject({ source: 'mhs', receipt: res.receipt });
    expect(await executions(engine, EP, 'conveyor-workcell', res.commandId)).toBe(1);
  });

  test('HOST-031: invalid input is refused locally with MHS.SCHEMA.INVALID_INPUT and nothing is journaled', async () => {
    const before = (await store.ledger.head()).seq;
    expect(
      await codeOf(
        engine.invoke({
          endpointId: EP,
          deviceId: 'conveyor-workcell',
          capabilityId: 'cap.world.step.v1',
          input: { ticks: 0 },
        }),
      ),
    ).toBe(ErrorCode.SCHEMA_INVALID_INPUT);
    expect(
      await codeOf(engine.invoke({ endpointId: EP, deviceId: 'nope', capabilityId: 'cap.world.step.v1', input: {} })),
    ).toBe(ErrorCode.SCHEMA_INVALID_INPUT);
    const after = await store.ledger.range(before + 1);
    expect(after.filter((e) => e.kind === 'command.intent')).toEqual([]);
  });

  test('HOST-091 HOST-052: a receipt is durable before the next intent, without holding the caller', async () => {
    const call = {
      endpointId: EP,
      deviceId: 'conveyor-workcell',
      capabilityId: 'cap.world.step.v1',
      input: { ticks: 1 },
    };
    const a = await engine.invoke(call);
    const b = await engine.invoke(call);
    const aReceipt = (await store.ledger.byCommand(a.commandId)).find((e) => e.kind === 'receipt')!;
    expect(aReceipt.seq).toBeLessThan(b.intentSeq);
    expect(await a.recorded).toBe(aReceipt.seq);
    await b.recorded;
  });

  test('HOST-072: a refusal comes back as the full rejected receipt with its mhs_code and remediation', async () => {
    const res = await engine.invoke({
      endpointId: EP,
      deviceId: 'conveyor-workcell',
      capabilityId: 'cap.world.step.v1',
      input: { ticks: 1 },
      expectedRevision: 999,
    });
    expect(res.outcome).toBe('final');
    expect(res.receipt.status).toBe('rejected');
    expect(res.receipt.error?.mhs_code).toBe(ErrorCode.STATE_STALE_REVISION);
    expect(typeof res.receipt.error?.remediation).toBe('string');
  });

  test('HOST-043: the default gate refuses permit-required capabilities before any intent', async () => {
    expect(
      await codeOf(
        engine.invoke({
          endpointId: EP,
          deviceId: 'liquid-handler',
          capabilityId: 'cap.liquid.aspirate.v1',
          input: { volume_ul: 10 },
        }),
      ),
    ).toBe(ErrorCode.HOST_APPROVAL_REQUIRED);
    expect(engine.pending()).toEqual([]);
  });

  test('HOST-037: a long command answers running before deadline_ms and is followed to its final receipt', async () => {
    const res = await engine.invoke({
      endpointId: EP,
      deviceId: 'thermostat',
      capabilityId: 'cap.thermal.setpoint.v1',
      input: { setpoint_c: 30 },
      deadlineMs: 200,
    });
    expect(res.outcome).toBe('final');
    expect(res.receipt.status).toBe('completed');
    await res.recorded;
    const kinds = (await store.ledger.byCommand(res.commandId)).map((e) => [
      e.kind,
      (e.receipt as { status?: string })?.status,
    ]);
    expect(kinds).toEqual([
      ['command.intent', undefined],
      ['receipt', 'running'],
      ['receipt', 'completed'],
    ]);
    const intent = (await store.ledger.byCommand(res.commandId))[0]!;
    expect(intent.deadline_ms).toBe(200);
  });
});
