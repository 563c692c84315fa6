// Guarantees: a command lane is bounded (full → MHS.LIMIT.RATE, nothing run), serial per device, parallel across
// devices, and a stalled lane never delays another (HOST-082); a device gate stays shut until its own command
// settles (HOST-091).
import { describe, expect, test } from 'vitest';
import { ErrorCode, HostError } from '../../src/core/index.js';
import { CommandLane } from '../../src/engine/command-lane.js';
import { DeviceGates } from '../../src/engine/device-gate.js';

function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
const tick = () => new Promise((r) => setImmediate(r));

describe('command lane', () => {
  test('HOST-082: full lane refuses with MHS.LIMIT.RATE and runs nothing more', async () => {
    const lane = new CommandLane({ endpointId: 'mhs://a', maxPending: 2 });
    const gate = deferred();
    let ran = 0;
    const job = () => {
      ran++;
      return gate.promise;
    };
    const a = lane.submit('d', job);
    const b = lane.submit('d', job);
    const err = await lane.submit('d', job).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HostError);
    expect((err as HostError).code).toBe(ErrorCode.LIMIT_RATE);
    expect((err as HostError).retryable).toBe(true);
    gate.resolve();
    await Promise.all([a, b]);
    expect(ran).toBe(2);
    expect(lane.stats()).toMatchObject({ pending: 0, refused: 1 });
    lane.close();
  });

  test('serial per device, side by side across devices', async () => {
    const lane = new CommandLane({ endpointId: 'mhs://a' });
    const gates = [deferred(), deferred(), deferred()];
    const order: string[] = [];
    const p1 = lane.submit('d1', async () => (order.push('d1a'), gates[0]!.promise));
    const p2 = lane.submit('d1', async () => (order.push('d1b'), gates[1]!.promise));
    const p3 = lane.submit('d2', async () => (order.push('d2a'), gates[2]!.promise));
    await tick();
    expect(order).toEqual(['d1a', 'd2a']);
    expect(lane.stats().running).toBe(2);
    gates[0]!.resolve();
    await p1;
    await tick();
    expect(order).toEqual(['d1a', 'd2a', 'd1b']);
    gates[1]!.resolve();
    gates[2]!.resolve();
    await Promise.all([p2, p3]);
    expect(lane.stats().maxRunning).toBe(2);
    lane.close();
  });

  test('HOST-082: a stalled lane does not delay another lane', async () => {
    const stalled = new CommandLane({ endpointId: 'mhs://stalled', maxPending: 4 });
    const healthy = new CommandLane({ endpointId: 'mhs://healthy' });
    const never = new Promise<void>(() => undefined);
    void stalled.submit('d', () => never);
    const queued = stalled.submit('d', async () => 'late');
    const results = await Promise.all([1, 2, 3].map((n) => healthy.submit('d', async () => n)));
    expect(results).toEqual([1, 2, 3]);
    stalled.close();
    const err = (await queued.catch((e: unknown) => e)) as HostError;
    expect(err.code).toBe(ErrorCode.TRANSPORT_DISCONNECTED);
    expect(err.details.sent).toBe(false);
    healthy.close();
  });

  test('job errors reach their caller and the lane keeps serving', async () => {
    const lane = new CommandLane({ endpointId: 'mhs://a' });
    await expect(lane.submit('d', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(lane.submit('d', async () => 7)).resolves.toBe(7);
    lane.close();
  });
});

describe('device gates', () => {
  test('HOST-091: shut gate refuses with MHS.HOST.DEVICE_GATE_CLOSED until its own command settles', () => {
    const gates = new DeviceGates('mhs://a');
    gates.acquire('d1', 'cmd_1', 0);
    gates.acquire('d2', 'cmd_2', 0);
    gates.mark('d1', 'cmd_1', 'unknown');
    let err: unknown;
    try {
      gates.acquire('d1', 'cmd_3', 0);
    } catch (e) {
      err = e;
    }
    expect((err as HostError).code).toBe(ErrorCode.HOST_DEVICE_GATE_CLOSED);
    expect((err as HostError).details).toMatchObject({ device_id: 'd1', command_id: 'cmd_1', reason: 'unknown' });
    expect(gates.release('d1', 'cmd_3')).toBe(false);
    expect(gates.state('d1').status).toBe('shut');
    expect(gates.release('d1', 'cmd_1')).toBe(true);
    gates.acquire('d1', 'cmd_3', 0);
    expect(
      gates
        .unsettled()
        .map((u) => u.commandId)
        .sort(),
    ).toEqual(['cmd_2', 'cmd_3']);
  });
});
