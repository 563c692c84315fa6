// Guarantees (HOST-080, 081, 082, 034): one task drives several real endpoints through the same governed path;
// a stalled endpoint delays only its own steps while the healthy endpoint's commands complete and their receipts
// are all in the ledger; a parent_action entry lists every child command and receipt; one W3C traceparent from
// the task span is in every command's ledger entries; sessions are per endpoint and closed at task end.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Engine, TaskProgress } from '../../src/engine/index.js';
import { traceIdOf } from '../../src/engine/index.js';
import { connectStdio, openStore, startEngine } from './harness.js';
import type { Store } from './harness.js';

const STALLED = 'mhs://test/stalled';
const HEALTHY = 'mhs://test/healthy';
let store: Store;
let engine: Engine;

beforeAll(async () => {
  store = await openStore();
  engine = await startEngine(store, { transportMarginMs: 300 });
  await Promise.all([
    connectStdio('conveyor', ['--stall', '--endpoint-id', STALLED], 'mhs-stalled').then((c) => engine.attach(c)),
    connectStdio('conveyor,thermostat', ['--endpoint-id', HEALTHY, '--time-scale', '20'], 'mhs-healthy').then((c) =>
      engine.attach(c),
    ),
  ]);
});
afterAll(async () => {
  await engine?.stop();
  await store?.close();
});

describe('multi-endpoint task', () => {
  test('HOST-082 HOST-080 HOST-081: healthy endpoint completes while the other is stalled; one trace; parent action', async () => {
    const events: TaskProgress[] = [];
    let stalledDoneWhenHealthyDone: boolean | undefined;
    const result = await engine.runTask(
      {
        name: 'two endpoints',
        steps: [
          {
            endpoint: STALLED,
            device: 'conveyor-workcell',
            capability: 'cap.world.step.v1',
            input: { ticks: 1 },
            deadlineMs: 1_500,
          },
          { endpoint: STALLED, device: 'conveyor-workcell', capability: 'cap.world.step.v1', input: { ticks: 1 } },
          { endpoint: HEALTHY, device: 'conveyor-workcell', capability: 'cap.world.step.v1', input: { ticks: 2 } },
          { endpoint: HEALTHY, device: 'thermostat', capability: 'cap.thermal.setpoint.v1', input: { setpoint_c: 25 } },
          { endpoint: HEALTHY, device: 'thermostat', capability: 'cap.thermal.read.v1', input: {} },
          { endpoint: HEALTHY, device: 'conveyor-workcell', capability: 'cap.world.step.v1', input: { ticks: 1 } },
        ],
      },
      {
        onProgress: (p) => {
          events.push(p);
          if (p.type === 'endpoint.done' && p.endpointId === HEALTHY)
            stalledDoneWhenHealthyDone = events.some((e) => e.type === 'step.done' && e.result.index === 0);
        },
      },
    );
    // The healthy endpoint finished before the stalled step had any outcome.
    expect(stalledDoneWhenHealthyDone).toBe(false);
    expect(result.ok).toBe(false);
    expect(result.steps.map((s) => s.status)).toEqual(['unknown', 'skipped', 'final', 'final', 'final', 'final']);
    for (const s of result.steps.slice(2)) expect(s.receipt?.status).toBe('completed');

    const entries = await store.ledger.range(result.parentSeq);
    const start = entries[0]!;
    expect(start).toMatchObject({ kind: 'parent_action', phase: 'start', task_id: result.taskId });
    const end = entries.find((e) => e.seq === result.endSeq)!;
    const children = end.children as Array<{ command_id: string | null; endpoint_id: string; outcome: string }>;
    expect(children.map((c) => c.outcome)).toEqual(['unknown', 'skipped', 'final', 'final', 'final', 'final']);
    // Every healthy receipt is in the ledger as a child of the parent action.
    for (const s of result.steps.slice(2)) {
      const rs = entries.filter((e) => e.kind === 'receipt' && e.command_id === s.commandId);
      expect(rs.at(-1)).toMatchObject({
        parent_action: result.taskId,
        parent_seq: result.parentSeq,
        receipt: s.receipt,
      });
    }
    // One traceparent for the whole task, in every command entry.
    const commandEntries = entries.filter((e) => ['command.intent', 'receipt', 'command.unknown'].includes(e.kind));
    expect(commandEntries.length).toBeGreaterThanOrEqual(9);
    expect(new Set(commandEntries.map((e) => e.traceparent))).toEqual(new Set([result.traceparent]));
    expect(traceIdOf(result.traceparent)).toMatch(/^[0-9a-f]{32}$/);

    // HOST-034/080: sessions per endpoint and device scope, with only the needed capabilities, closed at task end.
    const opened = entries.filter((e) => e.kind === 'session.open' && e.scope === result.taskId);
    const healthyThermo = opened.find((e) => e.endpoint_id === HEALTHY && e.device_id === 'thermostat');
    expect((healthyThermo?.capabilities as string[]).sort()).toEqual([
      'cap.thermal.read.v1',
      'cap.thermal.setpoint.v1',
    ]);
    const ids = opened.map((e) => e.session_id);
    expect(new Set(ids).size).toBe(ids.length);
    const closed = (await store.ledger.range(result.parentSeq))
      .filter((e) => e.kind === 'session.close')
      .map((e) => e.session_id);
    for (const e of opened.filter((o) => o.endpoint_id === HEALTHY)) expect(closed).toContain(e.session_id);
  });
});
