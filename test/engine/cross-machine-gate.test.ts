// Guarantees (HOST-091 on a store shared by hosts on different machines): a host whose device gate belongs to a host
// process on another machine judges that owner by its lease. While the owner renews it, start-up recovery leaves the
// owner's command alone and new commands on the device are refused MHS.HOST.DEVICE_GATE_CLOSED without a takeover.
// Once the owner crashed and its lease lapsed, the next command on the device takes the gate over: the command is
// recorded command.unknown (owner_gone), reconciled from the endpoint, and the device takes commands again. The
// owner's command never executes twice.
import { afterEach, describe, expect, test } from 'vitest';
import { ErrorCode, RealClock } from '../../src/core/index.js';
import type { HostError } from '../../src/core/index.js';
import { createEngine } from '../../src/engine/index.js';
import { connect } from '../../src/mhs/connector.js';
import { callMhs, connectMcpClient, startSimHttp } from '../helpers/sim.js';
import type { SimHttp } from '../helpers/sim.js';
import { httpRow, openStore, startEngine } from './harness.js';
import type { Store } from './harness.js';

const DEVICE = 'conveyor-workcell';
const CAP = 'cap.world.step.v1';
let sim: SimHttp | undefined;
const stores: Store[] = [];
afterEach(async () => {
  await sim?.stop();
  for (const s of stores.splice(0)) await s.close().catch(() => undefined);
});

async function counters(s: SimHttp): Promise<{ executions: Record<string, number>; capability_calls: number }> {
  const c = await connectMcpClient({ mcpUrl: s.mcpUrl });
  try {
    return (await callMhs(c, 'mhs__read', { device_id: DEVICE, resource: '_counters' })).body.state as {
      executions: Record<string, number>;
      capability_calls: number;
    };
  } finally {
    await c.close();
  }
}

describe('device gates of a host on another machine', () => {
  test('HOST-091: a remote owner is left alone while its lease is renewed, and its command is taken over and reconciled once the lease lapsed', async () => {
    // The endpoint accepts the first call and never answers it: machine A's command stays in flight.
    sim = await startSimHttp('conveyor', ['--stall', '1']);
    const s = sim;
    const a = await openStore(undefined, new RealClock(), { owner: 'lab-a:101', lease: { ttlMs: 600 } });
    stores.push(a);
    const engineA = await startEngine(a);
    const connA = await connect(httpRow(s.mcpUrl, s.endpointId, 'lab-a-conn'));
    await engineA.attach(connA);
    const inFlight = engineA
      .invoke({
        endpointId: s.endpointId,
        deviceId: DEVICE,
        capabilityId: CAP,
        input: { ticks: 1 },
        // Long enough that A's own transport timeout never fires before A crashes below; short enough that B may
        // conclude `not_executed` (only once the deadline has passed, issue 16) within the test.
        deadlineMs: 8_000,
      })
      .catch((e: unknown) => e);
    while ((await counters(s)).capability_calls < 1) await new Promise((r) => setTimeout(r, 20));
    const theirs = (await a.ledger.deviceGates())[0]?.command_id as string;
    expect(theirs).toMatch(/^cmd_/);

    // Machine B shares the store. A renews its lease: B's recovery leaves A's command to A.
    const b = await openStore(a.path, new RealClock(), { owner: 'lab-b:202', lease: { ttlMs: 600, skewMs: 50 } });
    stores.push(b);
    const engineB = createEngine({ ledger: b.ledger });
    expect((await engineB.start()).ownedElsewhere).toEqual([theirs]);
    expect(engineB.pending()).toEqual([]);
    await engineB.attach(await connect(httpRow(s.mcpUrl, s.endpointId, 'lab-b-conn')));
    const step = () =>
      engineB
        .invoke({ endpointId: s.endpointId, deviceId: DEVICE, capabilityId: CAP, input: { ticks: 1 } })
        .catch((e: unknown) => e as HostError);
    const refused = (await step()) as HostError;
    expect(refused).toMatchObject({
      code: ErrorCode.HOST_DEVICE_GATE_CLOSED,
      details: { command_id: theirs, owner: 'lab-a:101', durable: true },
    });
    expect(refused.details.reconciling).toBeUndefined();
    expect((await b.ledger.byCommand(theirs)).map((e) => e.kind)).toEqual(['command.intent']);

    // Machine A crashes: it writes nothing more and its lease is no longer renewed (nor ended).
    a.ledger.dispose();
    await a.db.close();
    await connA.close();
    await inFlight;

    // Until the lease lapses B is refused as before; then its command takes the gate over and reconciles it.
    let r = await step();
    while ((r as HostError).details?.reconciling !== true) {
      expect(r).toMatchObject({ code: ErrorCode.HOST_DEVICE_GATE_CLOSED, details: { command_id: theirs } });
      await new Promise((res) => setTimeout(res, 50));
      r = await step();
    }
    let kinds: string[] = [];
    while (!kinds.includes('reconcile')) {
      kinds = (await b.ledger.byCommand(theirs)).map((e) => e.kind);
      await new Promise((res) => setTimeout(res, 20));
    }
    const entries = await b.ledger.byCommand(theirs);
    expect(entries[1]).toMatchObject({ kind: 'command.unknown', reason: 'owner_gone', owner: 'lab-a:101' });
    // The endpoint has no record of it: settled `not_executed` once its deadline (plus the margin) has passed.
    await engineB.reconcile({ commandId: theirs, untilSettled: true });
    const mine = await engineB.invoke({
      endpointId: s.endpointId,
      deviceId: DEVICE,
      capabilityId: CAP,
      input: { ticks: 1 },
    });
    expect(mine.receipt.status).toBe('completed');
    const ex = (await counters(s)).executions;
    expect(ex[theirs] ?? 0).toBeLessThanOrEqual(1);
    expect(ex[mine.commandId]).toBe(1);
    expect(await b.ledger.deviceGates()).toEqual([]);
    expect((await b.ledger.verify()).ok).toBe(true);
    await engineB.stop();
  }, 90_000);
});
