// Guarantees (HOST-034, HOST-035, HOST-036) at engine level against a real simulator, with the engine on a
// SimulatedClock: sessions are opened with the host-built agent principal and only the needed capability,
// heartbeated on the real endpoint before expiry, reopened (with the device state re-read) after the local
// expiry passes or after the endpoint forgets the session, and a command failed by the expired session is
// returned as not executed, never resent on the new session.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { ErrorCode, SimulatedClock } from '../../src/core/index.js';
import type { Engine } from '../../src/engine/index.js';
import { connect } from '../../src/mhs/connector.js';
import { callMhs, connectMcpClient, startSimHttp } from '../helpers/sim.js';
import type { SimHttp } from '../helpers/sim.js';
import { executions, httpRow, openStore, startEngine } from './harness.js';
import type { Store } from './harness.js';

const clock = new SimulatedClock(Date.UTC(2026, 10, 30, 8));
let sim: SimHttp;
let other: Client;
let store: Store;
let engine: Engine;
const flush = () => new Promise((r) => setImmediate(r));
const call = () => ({
  endpointId: sim.endpointId,
  deviceId: 'conveyor-workcell',
  capabilityId: 'cap.world.step.v1',
  input: { ticks: 1 },
});

beforeAll(async () => {
  sim = await startSimHttp('conveyor');
  other = await connectMcpClient({ mcpUrl: sim.mcpUrl });
  store = await openStore(undefined, clock);
  engine = await startEngine(store, { clock, sessionTtlMs: 30_000, adhocIdleMs: 3_600_000 });
  await engine.attach(await connect(httpRow(sim.mcpUrl, sim.endpointId)));
});
afterAll(async () => {
  await engine?.stop();
  await other?.close();
  await sim?.stop();
  await store?.close();
});

async function sessionEntries(kind: string) {
  return (await store.ledger.range(0)).filter((e) => e.kind === kind);
}

describe('session lifecycle on a simulated clock', () => {
  test('HOST-034 HOST-035 HOST-036: heartbeat before expiry, reopen after local expiry with a state re-read', async () => {
    const first = await engine.invoke(call());
    const [opened] = await sessionEntries('session.open');
    expect(opened).toMatchObject({
      session_id: first.receipt.session_id,
      capabilities: ['cap.world.step.v1'],
      principal: { kind: 'agent', id: 'host:mhs-host' },
    });
    const lease = engine.endpoint(sim.endpointId)!.sessionList()[0]!;
    expect(lease.sessionId).toBe(first.receipt.session_id);

    // Heartbeat interval or a fifth of the ttl before expiry, whichever first: by 24 s one heartbeat has gone out.
    clock.advance(24_000);
    while ((await sessionEntries('session.heartbeat')).length === 0) await flush();
    const [hb] = await sessionEntries('session.heartbeat');
    expect(hb).toMatchObject({ session_id: first.receipt.session_id });

    // The endpoint reports the session gone (as a call answered MHS.SESSION.EXPIRED would): the next call reopens.
    engine.endpoint(sim.endpointId)!.sessionExpired(first.receipt.session_id);
    await flush();
    const second = await engine.invoke(call());
    expect(second.receipt.status).toBe('completed');
    expect(second.receipt.session_id).not.toBe(first.receipt.session_id);
    const reopened = (await sessionEntries('session.open')).at(-1)!;
    expect(reopened).toMatchObject({ session_id: second.receipt.session_id, reopened_from: first.receipt.session_id });
    expect(typeof reopened.revision).toBe('number');
    expect(reopened.state_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  test('HOST-036: endpoint forgot the session → command returned not executed, next call on a reopened session', async () => {
    const before = await engine.invoke(call());
    await callMhs(other, 'mhs__session', { action: 'close', session_id: before.receipt.session_id });
    const err = (await engine.invoke(call()).catch((e: unknown) => e)) as {
      code: string;
      details: Record<string, unknown>;
    };
    expect([ErrorCode.SESSION_UNKNOWN, ErrorCode.SESSION_EXPIRED]).toContain(err.code);
    expect(err.details.executed).toBe(false);
    const failedId = err.details.command_id as string;
    expect(await executions(engine, sim.endpointId, 'conveyor-workcell', failedId)).toBe(0);
    const after = await engine.invoke(call());
    expect(after.receipt.status).toBe('completed');
    expect(after.receipt.session_id).not.toBe(before.receipt.session_id);
    expect(after.commandId).not.toBe(failedId);
    // The failed command was never sent again.
    expect(await executions(engine, sim.endpointId, 'conveyor-workcell', failedId)).toBe(0);
    expect((await store.ledger.byCommand(failedId)).map((e) => e.kind)).toEqual(['command.intent', 'error']);
  });

  test('HOST-036: on the clock, the refused heartbeat / passed deadline expires the session; the next call reopens', async () => {
    const a = await engine.invoke(call());
    const expiredBefore = (await sessionEntries('session.expired')).length;
    // Make heartbeats impossible (endpoint session closed behind the host), then pass expires_at.
    await callMhs(other, 'mhs__session', { action: 'close', session_id: a.receipt.session_id });
    clock.advance(31_000);
    while ((await sessionEntries('session.expired')).length === expiredBefore) await flush();
    const b = await engine.invoke(call());
    expect(b.receipt.session_id).not.toBe(a.receipt.session_id);
  });
});
