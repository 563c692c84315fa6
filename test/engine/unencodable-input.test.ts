// Guarantees (issue 16 item 3, a lone surrogate in a model's tool arguments or an endpoint's receipt), against real
// simulators and a real SQLite ledger: tool arguments JCS cannot encode are refused with MHS.SCHEMA.INVALID_INPUT
// and nothing is journalled or sent; a receipt holding one is a protocol fault of THAT endpoint (an `error` entry
// naming it, the outcome unknown and the device gate shut until reconciled from the clean retained receipt), the
// ledger stays available and another endpoint's commands are unaffected.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ErrorCode, HostError } from '../../src/core/index.js';
import type { Engine } from '../../src/engine/index.js';
import { dispatchToolCall } from '../../src/engine/tool-dispatch.js';
import { ToolSurfaceBuilder } from '../../src/engine/tool-surface.js';
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

describe('lone surrogates at the canonical-JSON boundary', () => {
  let store: Store;
  let engine: Engine;
  let BAD = '';
  let GOOD = '';
  const step = { deviceId: 'conveyor-workcell', capabilityId: 'cap.world.step.v1', deadlineMs: 5_000 };
  beforeAll(async () => {
    store = await openStore();
    engine = await startEngine(store, { transportMarginMs: 500 });
    const [bad, good] = await Promise.all([
      connectStdio('conveyor', ['--surrogate-reply', '1']),
      connectStdio('thermostat'),
    ]);
    BAD = (await engine.attach(bad)).endpointId;
    GOOD = (await engine.attach(good)).endpointId;
  });
  afterAll(async () => {
    await engine?.stop();
    await store?.close();
  });

  test('tool arguments with a lone surrogate: MHS.SCHEMA.INVALID_INPUT, nothing journalled or sent', async () => {
    const head = (await store.ledger.head()).seq;
    const err = await failure(engine.invoke({ endpointId: BAD, ...step, input: { ticks: 1, ['k\ud800']: 'x' } }));
    expect(err.code).toBe(ErrorCode.SCHEMA_INVALID_INPUT);
    expect(err.details.path).toBe('/k\ud800');
    expect((await store.ledger.head()).seq).toBe(head);
    expect(store.ledger.status().state).toBe('available');

    // A model's tool call: the error is the model's result (never a throw); the ledger records it well-formed.
    const surface = new ToolSurfaceBuilder().build([{ endpointId: BAD, manifest: engine.endpoint(BAD)!.manifest }]);
    const tool = surface.tools.find((t) => t.kind === 'capability')!;
    const d = await dispatchToolCall(
      { engine, ledger: store.ledger },
      surface,
      { id: 'call-\udc00', name: tool.name, arguments: { ticks: 1, note: '\ud800' } },
      { agentRunId: 'run-1' },
    );
    expect(d.isError).toBe(true);
    expect((d.result.error as { mhs_code: string }).mhs_code).toBe(ErrorCode.SCHEMA_INVALID_INPUT);
    expect(d.commandId).toBeNull();
    const entries = await store.ledger.range(head + 1);
    expect(entries.map((e) => e.kind)).toEqual(['tool_call']);
    expect(entries.some((e) => e.kind === 'command.intent')).toBe(false);
    expect(store.ledger.status().state).toBe('available');
  });

  test("a receipt with a lone surrogate: that endpoint's protocol fault, outcome unknown, others unaffected", async () => {
    const err = await failure(engine.invoke({ endpointId: BAD, ...step, input: { ticks: 1 } }));
    expect(err.code).toBe(ErrorCode.OUTCOME_UNKNOWN);
    expect(err.details.cause_code).toBe(ErrorCode.HOST_ENDPOINT_PROTOCOL_FAULT);
    expect(err.details.ledger_error).toBeUndefined();
    const commandId = err.details.command_id as string;
    expect(store.ledger.status().state).toBe('available');

    const all = await store.ledger.range(0);
    const fault = all.find((e) => e.kind === 'error' && e['phase'] === 'protocol_fault');
    expect(fault).toMatchObject({ endpoint_id: BAD, device_id: step.deviceId, subject_command_id: commandId });
    expect((fault!['error'] as { mhs_code: string }).mhs_code).toBe(ErrorCode.HOST_ENDPOINT_PROTOCOL_FAULT);
    expect((await store.ledger.byCommand(commandId)).map((e) => e.kind)).toEqual(['command.intent', 'command.unknown']);

    // HOST-091: the device gate is shut; another endpoint still works and is recorded.
    const refused = await failure(engine.invoke({ endpointId: BAD, ...step, input: { ticks: 1 } }));
    expect(refused.code).toBe(ErrorCode.HOST_DEVICE_GATE_CLOSED);
    const other = await engine.invoke({
      endpointId: GOOD,
      deviceId: 'thermostat',
      capabilityId: 'cap.thermal.read.v1',
      input: {},
    });
    expect(other.receipt.status).toBe('completed');
    expect(await other.recorded).toBeGreaterThan(0);

    // Reconciled from the endpoint's (clean) retained receipt: settled, executed once, the gate reopens.
    const [rec] = await engine.reconcile({ commandId });
    expect(rec).toMatchObject({ outcome: 'receipt' });
    expect(await executions(engine, BAD, step.deviceId, commandId)).toBe(1);
    const next = await engine.invoke({ endpointId: BAD, ...step, input: { ticks: 1 } });
    expect(next.receipt.status).toBe('completed');
    expect(await store.ledger.verify()).toMatchObject({ ok: true });
  });
});
