// Guarantees (issue 16 item 1, HOST-091, HOST-037), against a real slow but conforming simulator (stdio child,
// `--execute-after-ms 1800`: it never answers and executes the command at 0.9 × its 2 s deadline): a command whose
// outcome became unknown early is never concluded `not_executed` while its deadline (plus the transport margin)
// has not passed. Reconciled before that, it stays unknown with its gate shut (recorded, `retryAt`), and the
// engine reconciles it again once the deadline has passed: the endpoint's receipt is found and recorded, the
// command executed exactly once, and the gate reopens. `untilSettled` waits the same way for a caller.
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { ErrorCode, HostError } from '../../src/core/index.js';
import type { Engine } from '../../src/engine/index.js';
import { connectStdio, executions, openStore, startEngine } from './harness.js';
import type { Store } from './harness.js';

const DEADLINE = 2_000;
const MARGIN = 300;
const call = { deviceId: 'conveyor-workcell', capabilityId: 'cap.world.step.v1', deadlineMs: DEADLINE };

let store: Store;
let engine: Engine;
let EP = '';

beforeAll(async () => {
  store = await openStore();
  engine = await startEngine(store, { transportMarginMs: MARGIN });
  const conn = await connectStdio('conveyor', ['--execute-after-ms', String(0.9 * DEADLINE)]);
  EP = (await engine.attach(conn)).endpointId;
}, 60_000);

afterAll(async () => {
  await engine?.stop();
  await store?.close();
});

/** Sends a command and gives up on its answer 100 ms after it left: its outcome is unknown while the endpoint works on. */
async function unknownCommand(ticks: number): Promise<{ commandId: string; sentAt: number }> {
  const abort = new AbortController();
  const sentAt = Date.now();
  const p = engine.invoke({ endpointId: EP, ...call, input: { ticks }, signal: abort.signal }).then(
    () => undefined,
    (e: unknown) => e,
  );
  while (engine.endpoint(EP)!.laneStats().running === 0) await new Promise((r) => setImmediate(r));
  await new Promise((r) => setTimeout(r, 100));
  abort.abort();
  const err = await p;
  expect(err).toBeInstanceOf(HostError);
  expect((err as HostError).code).toBe(ErrorCode.OUTCOME_UNKNOWN);
  return { commandId: (err as HostError).details.command_id as string, sentAt };
}

describe('issue 16: a slow conforming endpoint', () => {
  test('HOST-091: reconciled before its deadline the command stays unknown, then settles from the endpoint, executed once', async () => {
    const { commandId, sentAt } = await unknownCommand(2);
    const [early] = await engine.reconcile({ commandId });
    expect(early).toMatchObject({ commandId, outcome: 'unknown', receipt: null });
    expect(early!.retryAt).toBeGreaterThanOrEqual(sentAt + DEADLINE);
    expect(engine.pending().map((p) => p.commandId)).toEqual([commandId]);
    await expect(engine.invoke({ endpointId: EP, ...call, input: { ticks: 1 } })).rejects.toMatchObject({
      code: ErrorCode.HOST_DEVICE_GATE_CLOSED,
    });

    // Nobody asks again: the engine re-armed the reconciliation for when the deadline has passed.
    await vi.waitFor(() => expect(engine.pending()).toEqual([]), { timeout: 10_000, interval: 100 });
    expect(await executions(engine, EP, 'conveyor-workcell', commandId)).toBe(1);
    const entries = await store.ledger.byCommand(commandId);
    const reconciles = entries.filter((e) => e.kind === 'reconcile');
    expect(reconciles.map((e) => e.outcome)).toEqual(['unknown', 'receipt']);
    expect(reconciles[0]).toMatchObject({ reason: 'no_record_before_deadline' });
    expect(entries.some((e) => e.kind === 'receipt' && (e.receipt as { status?: string }).status === 'completed')).toBe(
      true,
    );
  }, 30_000);

  test('HOST-091: reconcile untilSettled waits past the deadline and returns the receipt', async () => {
    const { commandId } = await unknownCommand(3);
    const [rec] = await engine.reconcile({ commandId, untilSettled: true });
    // Settled by this call or by the re-armed one at the same time: either way from the endpoint's receipt.
    if (rec) expect(rec).toMatchObject({ outcome: 'receipt' });
    expect(engine.pending()).toEqual([]);
    expect(await executions(engine, EP, 'conveyor-workcell', commandId)).toBe(1);
    const outcomes = (await store.ledger.byCommand(commandId)).filter((e) => e.kind === 'reconcile');
    expect(outcomes.map((e) => e.outcome)).toEqual(['unknown', 'receipt']);
  }, 30_000);
});
