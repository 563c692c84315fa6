// Guarantees (issue 16 leases, issue 21 hot path): an ad-hoc session closes as idle exactly `adhocIdleMs` after
// the release of its last lease, although the session machine hears of a release a moment later (a call that takes
// the session again meanwhile keeps it held without a machine event); a session taken again before its idle time
// never closes. Engine on a SimulatedClock against a real simulator over HTTP.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { SimulatedClock } from '../../src/core/index.js';
import type { Engine } from '../../src/engine/index.js';
import { connect } from '../../src/mhs/connector.js';
import { startSimHttp } from '../helpers/sim.js';
import type { SimHttp } from '../helpers/sim.js';
import { httpRow, openStore, startEngine } from './harness.js';
import type { Store } from './harness.js';

const IDLE_MS = 1_000;
const clock = new SimulatedClock(Date.UTC(2026, 11, 7, 8));
let sim: SimHttp;
let store: Store;
let engine: Engine;
const flush = () => new Promise((r) => setImmediate(r));
const call = () =>
  engine.invoke({
    endpointId: sim.endpointId,
    deviceId: 'conveyor-workcell',
    capabilityId: 'cap.world.step.v1',
    input: { ticks: 1 },
  });

beforeAll(async () => {
  sim = await startSimHttp('conveyor');
  store = await openStore(undefined, clock);
  engine = await startEngine(store, { clock, sessionTtlMs: 600_000, adhocIdleMs: IDLE_MS });
  await engine.attach(await connect(httpRow(sim.mcpUrl, sim.endpointId)));
});
afterAll(async () => {
  await engine?.stop();
  await sim?.stop();
  await store?.close();
});

/** Whether `session.close` of `sessionId` is in the ledger, once a close begun by now would have finished. */
async function closed(sessionId: string): Promise<boolean> {
  const has = async () =>
    (await store.ledger.range(0)).some((e) => e.kind === 'session.close' && e.session_id === sessionId);
  // The close is a call to the endpoint (real HTTP) and then a ledger append: wait for it in real time, bounded.
  for (let i = 0; i < 40; i++) {
    if (await has()) return true;
    await flush();
    await new Promise((r) => setTimeout(r, 10));
  }
  return has();
}

describe('session leases: idle close after the last release', () => {
  test('taken again within the idle time: the same session, never closed; then closed adhocIdleMs after the release', async () => {
    const first = await call();
    await first.recorded;
    const session = first.receipt.session_id as string;
    for (const gap of [10, 30, IDLE_MS - 1]) {
      clock.advance(gap);
      const next = await call();
      await next.recorded;
      expect(next.receipt.session_id).toBe(session);
      expect(await closed(session)).toBe(false);
    }
    // The last call's lease was released when it returned: the deadline runs from that moment.
    clock.advance(IDLE_MS - 1);
    expect(await closed(session)).toBe(false);
    clock.advance(1);
    expect(await closed(session)).toBe(true);
    const after = await call();
    expect(after.receipt.session_id).not.toBe(session);
  });
});
