// Guarantees (HOST-091 on a store shared by machines), on every store dialect: a host process takes a lease in the
// store before its first gate claim and keeps renewing it; a host on another machine counts the gate's owner as
// running while the lease is renewed, as gone once the lease ended (clean stop) or lapsed by more than the clock
// skew (crash), and as unknown when the owner never held a lease there. A gone owner's gate is taken over
// by exactly one of the hosts trying. A claim made inside a caller's transaction takes the lease in it. An owner on
// this machine is still judged by its pid. A renewal the store refuses (a SQLite file locked by another connection)
// is reported as MHS.HOST.LEDGER_UNAVAILABLE and makes the ledger's status unavailable (HOST-093); renewals continue.
import { hostname } from 'node:os';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode, HostError, SimulatedClock } from '../../src/core/index.js';
import { GATE_OWNER, openDb, openLedger } from '../../src/ledger/index.js';
import type { Db, DurableLedger, LedgerAppend } from '../../src/ledger/index.js';
import { BACKENDS, sqliteBackend } from './helpers.js';
import type { StoreHandle } from './helpers.js';

const EP = 'mhs://lease/ep';
const intent = (cmd: string): LedgerAppend => ({
  kind: 'command.intent',
  command_id: cmd,
  endpoint_id: EP,
  device_id: 'dev-a',
  capability_id: 'cap.x.v1',
  input_digest: 'sha256:0',
  input: {},
  effect: 'actuate',
});
const LEASE = { ttlMs: 3_000, skewMs: 1_000 };

describe.each(BACKENDS)('host leases: $name', (backend) => {
  const handles: StoreHandle[] = [];
  const dbs: Db[] = [];
  const ledgers: DurableLedger[] = [];
  afterEach(async () => {
    for (const l of ledgers.splice(0)) l.dispose();
    for (const d of dbs.splice(0)) await d.close().catch(() => undefined);
    for (const h of handles.splice(0)) await h.cleanup();
  });

  /** A host "on machine `machine`": its own handle on the shared store, its own clock. */
  async function host(location: string, owner: string, clock = new SimulatedClock(1_000_000)) {
    const db = await openDb(location);
    dbs.push(db);
    const ledger = await openLedger(db, { clock, owner, lease: LEASE, probeIntervalMs: 0 });
    ledgers.push(ledger);
    return { db, ledger, clock };
  }
  async function store() {
    const h = await backend.fresh();
    handles.push(h);
    return h.location;
  }

  it('HOST-091: a renewed lease keeps a remote owner running; once it lapses beyond the skew the owner is gone and one host takes the gate over', async () => {
    const location = await store();
    const a = await host(location, 'lab-a:101');
    const b = await host(location, 'lab-b:202', a.clock);
    const c = await host(location, 'lab-c:303', a.clock);
    expect(await b.ledger.ownerRunning('lab-a:101')).toBeNull(); // no lease yet: nobody can tell

    await a.ledger.appendBatch([intent('cmd_a1')], { claimGates: true });
    expect((await b.ledger.deviceGates())[0]).toMatchObject({ command_id: 'cmd_a1', owner: 'lab-a:101' });
    expect(await b.ledger.ownerRunning('lab-a:101')).toBe(true);

    // Time passes on every machine; A's renewals keep it running well past one lease length.
    for (let i = 0; i < 10; i++) {
      a.clock.advance(1_000);
      await renewed(a.db, 'lab-a:101', a.clock.now() + LEASE.ttlMs);
    }
    expect(await b.ledger.ownerRunning('lab-a:101')).toBe(true);

    // A crashes: its renewals stop (its handle is gone), nothing ends the lease. Within the skew it still counts.
    a.ledger.dispose();
    await a.db.close();
    dbs.splice(dbs.indexOf(a.db), 1);
    a.clock.advance(LEASE.ttlMs);
    expect(await b.ledger.ownerRunning('lab-a:101')).toBe(true);
    a.clock.advance(LEASE.skewMs + 1);
    expect(await b.ledger.ownerRunning('lab-a:101')).toBe(false);

    // B and C both find the orphan: exactly one takes it over.
    const took = await Promise.all([
      b.ledger.takeOverGate('cmd_a1', 'lab-a:101'),
      c.ledger.takeOverGate('cmd_a1', 'lab-a:101'),
    ]);
    expect(took.filter(Boolean)).toHaveLength(1);
    const winner = took[0] ? 'lab-b:202' : 'lab-c:303';
    expect((await b.ledger.deviceGates())[0]).toMatchObject({ command_id: 'cmd_a1', owner: winner });
  });

  it('HOST-091: a clean stop ends the lease, so the owner is gone at once; a later claim takes the lease again', async () => {
    const location = await store();
    const a = await host(location, 'lab-a:101');
    const b = await host(location, 'lab-b:202', a.clock);
    await a.ledger.appendBatch([intent('cmd_a1')], { claimGates: true });
    expect(await b.ledger.ownerRunning('lab-a:101')).toBe(true);
    await a.ledger.releaseLease();
    expect(await b.ledger.ownerRunning('lab-a:101')).toBe(false);
    await a.ledger.appendBatch([
      { kind: 'receipt', command_id: 'cmd_a1', endpoint_id: EP, receipt: { status: 'completed' } },
    ]);
    await a.ledger.appendBatch([intent('cmd_a2')], { claimGates: true });
    expect(await b.ledger.ownerRunning('lab-a:101')).toBe(true);
  });

  it('HOST-091: a claim inside a caller transaction takes the lease in that transaction', async () => {
    const location = await store();
    const a = await host(location, 'lab-a:101');
    const b = await host(location, 'lab-b:202', a.clock);
    await a.db.tx((t) => a.ledger.appendIn(t, [intent('cmd_t1')], { claimGates: true }));
    expect((await b.ledger.deviceGates())[0]).toMatchObject({ command_id: 'cmd_t1', owner: 'lab-a:101' });
    expect(await b.ledger.ownerRunning('lab-a:101')).toBe(true);
  });

  it('HOST-091: a process that never claims a gate takes no lease; an owner on this machine is judged by its pid', async () => {
    const location = await store();
    const a = await host(location, 'lab-a:101');
    await a.ledger.append({ kind: 'receipt', command_id: 'cmd_x', endpoint_id: EP, receipt: { status: 'completed' } });
    expect(await a.db.all('SELECT owner FROM host_leases')).toEqual([]);
    // This very process: running, whatever the table says.
    expect(await a.ledger.ownerRunning(GATE_OWNER)).toBe(true);
    // A pid on this machine that cannot be running (beyond the kernel's pid range).
    expect(await a.ledger.ownerRunning(`${hostname()}:4194305`)).toBe(false);
  });
});

/** Waits until the lease's timer-driven renewal has reached the store (expiry at least `until`). */
async function renewed(db: Db, owner: string, until: number): Promise<void> {
  for (;;) {
    const row = await db.get<{ expires_at_ms: number | string }>(
      'SELECT expires_at_ms FROM host_leases WHERE owner = ?',
      [owner],
    );
    if (row && Number(row.expires_at_ms) >= until) return;
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('host lease renewal failures (SQLite)', () => {
  it('HOST-093: a renewal the store refuses is reported as LEDGER_UNAVAILABLE and shows in status(); renewals go on and a probe recovers', async () => {
    const h = await sqliteBackend.fresh();
    // A short busy timeout: the store is locked by another connection, as by a stuck writer on the same file.
    const db = await openDb(h.location, { sqlite: { busyTimeoutMs: 50 } });
    const clock = new SimulatedClock(1_000_000);
    const reported: HostError[] = [];
    const ledger = await openLedger(db, {
      clock,
      owner: 'lab-a:101',
      lease: LEASE,
      probeIntervalMs: 0,
      onLeaseError: (e) => reported.push(e),
    });
    const locker = new Database(h.location);
    try {
      await ledger.appendBatch([intent('cmd_a1')], { claimGates: true });
      expect(ledger.status().state).toBe('available');
      locker.exec('BEGIN IMMEDIATE');
      clock.advance(LEASE.ttlMs / 3);
      await until(() => reported.length > 0);
      expect(reported[0]).toBeInstanceOf(HostError);
      expect(reported[0]).toMatchObject({
        code: ErrorCode.HOST_LEDGER_UNAVAILABLE,
        details: { operation: 'lease_renewal', owner: 'lab-a:101', store_code: 'SQLITE_BUSY' },
      });
      expect(ledger.status()).toMatchObject({
        state: 'unavailable',
        last_error: { code: ErrorCode.HOST_LEDGER_UNAVAILABLE },
      });
      // The lock goes away: the next renewal reaches the store and the probe clears the status.
      locker.exec('ROLLBACK');
      clock.advance(LEASE.ttlMs / 3);
      await renewed(db, 'lab-a:101', clock.now() + LEASE.ttlMs);
      expect((await ledger.probe()).state).toBe('available');
      expect(reported).toHaveLength(1);
    } finally {
      locker.close();
      ledger.dispose();
      await db.close();
      await h.cleanup();
    }
  });
});

async function until(pred: () => boolean): Promise<void> {
  while (!pred()) await new Promise((r) => setTimeout(r, 5));
}
