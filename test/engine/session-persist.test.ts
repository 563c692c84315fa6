// Guarantees (HOST-036): endpoint-session snapshots persist in the store (SQLite, and PostgreSQL when
// MHS_TEST_PG_URL is set) and survive a host restart. A new engine over the same SQLite file, against the same
// real simulator process and on a SimulatedClock, reuses a session that has not expired and re-arms its heartbeat
// from the deadlines stored in the snapshot (XState drops pending timers on restore); a session whose expires_at
// passed while the host was down is reopened (with reopened_from) on its next use; a restored session the
// endpoint no longer knows (MHS.SESSION.UNKNOWN to the re-armed heartbeat) is reopened too.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { SimulatedClock } from '../../src/core/index.js';
import type { Engine } from '../../src/engine/index.js';
import { openSessionStore } from '../../src/engine/session-store.js';
import type { LedgerEntry } from '../../src/ledger/ledger-types.js';
import { connect } from '../../src/mhs/connector.js';
import { callMhs, connectMcpClient, startSimHttp } from '../helpers/sim.js';
import type { SimHttp } from '../helpers/sim.js';
import { STORE_KINDS, openStore as openBareStore } from '../mhs/helpers/stores.js';
import { connectStdio, httpRow, openStore, startEngine } from './harness.js';
import type { Store } from './harness.js';

const clock = new SimulatedClock(Date.UTC(2026, 10, 30, 9));
const DEVICE = 'conveyor-workcell';
let sim: SimHttp;
let other: Client;
let dir = '';
let path = '';
let store: Store | undefined;
let engine: Engine | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mhs-session-persist-'));
  path = join(dir, 'host.db');
  sim = await startSimHttp('conveyor');
  other = await connectMcpClient({ mcpUrl: sim.mcpUrl });
});
afterAll(async () => {
  await engine?.stop();
  await store?.close();
  await other?.close();
  await sim?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A host process over the same store file: its own Db, ledger, session store and engine. */
async function startHost(): Promise<Engine> {
  store = await openStore(path, clock);
  const sessionStore = await openSessionStore(store.db);
  engine = await startEngine(store, { clock, sessionTtlMs: 30_000, adhocIdleMs: 3_600_000, sessionStore });
  await engine.attach(await connect(httpRow(sim.mcpUrl, sim.endpointId)));
  return engine;
}

/** Stops the host as a restart does: sessions stay open at the endpoint, their snapshots stay in the store. */
async function stopHost(): Promise<void> {
  await engine?.stop({ keepSessions: true });
  await store?.close();
  engine = undefined;
  store = undefined;
}

async function entries(kind: string, sessionId?: string): Promise<LedgerEntry[]> {
  return (await store!.ledger.range(0)).filter(
    (e) => e.kind === kind && (sessionId === undefined || e.session_id === sessionId),
  );
}

const step = () => ({
  endpointId: sim.endpointId,
  deviceId: DEVICE,
  capabilityId: 'cap.world.step.v1',
  input: { ticks: 1 },
});

describe('session snapshots across a host restart', () => {
  test('HOST-036: a live session is reused after restart with its heartbeat re-armed; an expired one is reopened', async () => {
    let e = await startHost();
    const first = await e.invoke(step());
    const s1 = first.receipt.session_id;
    await e.endpoint(sim.endpointId)!.flushSessions();
    const rows = await store!.db.all<{ session_id: string }>('SELECT session_id FROM endpoint_sessions');
    expect(rows.map((r) => r.session_id)).toEqual([s1]);
    await stopHost();

    // Restart 5 s later: the heartbeat (due 10 s after the grant) is re-armed from the snapshot and goes out.
    clock.advance(5_000);
    e = await startHost();
    expect(e.endpoint(sim.endpointId)!.sessionList()).toMatchObject([{ sessionId: s1, deviceId: DEVICE }]);
    expect(await entries('session.heartbeat', s1)).toHaveLength(0);
    clock.advance(5_000);
    await vi.waitFor(async () => expect(await entries('session.heartbeat', s1)).toHaveLength(1), { timeout: 10_000 });
    const second = await e.invoke(step());
    expect(second.receipt.session_id).toBe(s1);
    expect(await entries('session.open')).toHaveLength(1);
    await stopHost();

    // Restart after expires_at passed: expired at once, reopened on the next use with the device re-read.
    clock.advance(60_000);
    e = await startHost();
    await vi.waitFor(async () => expect(await entries('session.expired', s1)).toHaveLength(1), { timeout: 10_000 });
    const third = await e.invoke(step());
    const s2 = third.receipt.session_id;
    expect(s2).not.toBe(s1);
    expect(third.receipt.status).toBe('completed');
    const [reopened] = await entries('session.open', s2);
    expect(reopened).toMatchObject({ reopened_from: s1 });
    expect(typeof reopened!.revision).toBe('number');
    await stopHost();
  });

  test('HOST-036: a restored session the endpoint no longer knows is reopened after its re-armed heartbeat', async () => {
    let e = await startHost();
    const before = await e.invoke(step());
    const s = before.receipt.session_id;
    await stopHost();
    const closed = await callMhs(other, 'mhs__session', { action: 'close', session_id: s });
    expect(closed.isError).toBe(false);

    clock.advance(1_000);
    e = await startHost();
    expect(e.endpoint(sim.endpointId)!.sessionList()).toMatchObject([{ sessionId: s }]);
    clock.advance(10_000);
    await vi.waitFor(async () => expect(await entries('session.expired', s)).toHaveLength(1), { timeout: 10_000 });
    const after = await e.invoke(step());
    expect(after.receipt.status).toBe('completed');
    expect(after.receipt.session_id).not.toBe(s);
    expect((await entries('session.open', after.receipt.session_id))[0]).toMatchObject({ reopened_from: s });
    // A normal stop closes the sessions and forgets their snapshots.
    await e.stop();
    expect(await store!.db.all('SELECT * FROM endpoint_sessions')).toEqual([]);
    await store!.close();
    engine = undefined;
    store = undefined;
  });
});

describe('session snapshots of a stdio endpoint', () => {
  test('HOST-036: a fresh stdio child cannot know the old sessions: restored as expired, reopened on next use', async () => {
    const file = join(dir, 'stdio.db');
    const run = async <T>(fn: (e: Engine, s: Store) => Promise<T>): Promise<T> => {
      const st = await openStore(file, clock);
      const e = await startEngine(st, { clock, adhocIdleMs: 3_600_000, sessionStore: await openSessionStore(st.db) });
      try {
        return await fn(e, st);
      } finally {
        await e.stop({ keepSessions: true });
        await st.close();
      }
    };
    const call = (endpointId: string) => ({
      endpointId,
      deviceId: DEVICE,
      capabilityId: 'cap.world.step.v1',
      input: { ticks: 1 },
    });
    const old = await run(async (e) => {
      const ep = await e.attach(await connectStdio('conveyor', [], 'mhs-persist-stdio'));
      return (await e.invoke(call(ep.endpointId))).receipt.session_id;
    });
    await run(async (e, st) => {
      const ep = await e.attach(await connectStdio('conveyor', [], 'mhs-persist-stdio'));
      expect(ep.sessionList()).toMatchObject([{ sessionId: old, state: '"expired"' }]);
      const r = await e.invoke(call(ep.endpointId));
      expect(r.receipt.status).toBe('completed');
      const opened = (await st.ledger.range(0)).filter(
        (x) => x.kind === 'session.open' && x.session_id === r.receipt.session_id,
      );
      expect(opened).toMatchObject([{ reopened_from: old }]);
    });
  });
});

describe.each(STORE_KINDS)('session snapshot store on %s', (kind) => {
  test('save, upsert, load per endpoint, remove', async () => {
    const db = await openBareStore(kind);
    try {
      const s = await openSessionStore(db);
      await openSessionStore(db); // the migration runs once
      const row = {
        endpointId: 'mhs://a',
        key: '["adhoc","d1",["cap.a.v1"]]',
        scope: 'adhoc',
        deviceId: 'd1',
        sessionId: 'ses_1',
        expiresAt: 1_764_493_200_000,
        snapshot: { value: { open: 'idle' }, context: { sessionId: 'ses_1' } },
      };
      await s.save(row);
      await s.save({ ...row, sessionId: 'ses_2', snapshot: { value: 'expired', context: { sessionId: 'ses_2' } } });
      await s.save({ ...row, endpointId: 'mhs://b' });
      expect(await s.load('mhs://a')).toEqual([
        { ...row, sessionId: 'ses_2', snapshot: { value: 'expired', context: { sessionId: 'ses_2' } } },
      ]);
      await s.remove('mhs://a', row.key);
      expect(await s.load('mhs://a')).toEqual([]);
      expect(await s.load('mhs://b')).toHaveLength(1);
    } finally {
      await db.close();
    }
  });

  test('prune drops rows of sessions expired before the cut, of any endpoint, and keeps the rest', async () => {
    const db = await openBareStore(kind);
    try {
      const s = await openSessionStore(db);
      const base = { scope: 'adhoc', deviceId: 'd1', snapshot: {} };
      await s.save({ ...base, endpointId: 'mhs://gone', key: 'k1', sessionId: 'ses_1', expiresAt: 1_000 });
      await s.save({ ...base, endpointId: 'mhs://live', key: 'k2', sessionId: 'ses_2', expiresAt: 9_000 });
      await s.save({ ...base, endpointId: 'mhs://new', key: 'k3', sessionId: null, expiresAt: null });
      expect(await s.prune(5_000)).toBe(1);
      expect(await s.load('mhs://gone')).toEqual([]);
      expect(await s.load('mhs://live')).toHaveLength(1);
      expect(await s.load('mhs://new')).toHaveLength(1);
    } finally {
      await db.close();
    }
  });
});
