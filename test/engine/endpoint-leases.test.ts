// Issue 19, endpoint leases on a real PostgreSQL store (a schema per store; skipped without MHS_TEST_PG_URL), with
// owners named after other machines so that only expiry decides: each enabled connector is claimed by exactly one of
// several processes sweeping at once (token 1, FOR UPDATE SKIP LOCKED); a lease nobody renewed is taken over with the
// token raised by one; the former holder's renewal finds it gone and detaches, and its fence refuses a write in the
// write's transaction with MHS.HOST.ENDPOINT_LEASE_LOST (nothing written) while the new holder's passes; a clean
// close lets its leases go at once.
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode, HostError, SimulatedClock } from '../../src/core/index.js';
import { openDb, openLedger } from '../../src/ledger/index.js';
import type { Db } from '../../src/ledger/index.js';
import { claimEndpoints, listEndpointLeases } from '../../src/engine/endpoint-leases.js';
import {
  ensureEndpointHosts,
  beatEndpointHost,
  fairShare,
  liveEndpointHosts,
} from '../../src/engine/endpoint-spread.js';
import type { HeldEndpointLease } from '../../src/engine/endpoint-leases.js';
import { EndpointOwnership } from '../../src/engine/endpoint-ownership.js';
import { PG_URL, postgresBackend } from '../ledger/helpers.js';
import type { StoreHandle } from '../ledger/helpers.js';

const TIMING = { ttlMs: 3_000, skewMs: 500 };
const CONNECTORS = ['c1', 'c2', 'c3', 'c4', 'c5', 'c6'];

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    return err instanceof HostError ? err.code : String(err);
  }
}

describe.skipIf(!PG_URL)('endpoint leases on one PostgreSQL store', () => {
  const handles: StoreHandle[] = [];
  const dbs: Db[] = [];
  const owners: EndpointOwnership[] = [];
  afterEach(async () => {
    for (const o of owners.splice(0)) await o.close();
    for (const d of dbs.splice(0)) await d.close().catch(() => undefined);
    for (const h of handles.splice(0)) await h.cleanup();
  });

  async function proc(location: string, owner: string, clock: SimulatedClock) {
    const db = await openDb(location);
    dbs.push(db);
    const own = new EndpointOwnership(db, clock, { owner, timing: TIMING });
    owners.push(own);
    const claimed: HeldEndpointLease[] = [];
    const lost: string[] = [];
    const start = () =>
      own.start({
        enabled: async () => CONNECTORS,
        claimed: async (l) => void claimed.push(...l),
        lost: async (id) => void lost.push(id),
      });
    return { db, own, claimed, lost, start, clock };
  }

  it('claimed once among sweepers; taken over with token 2 after the lease lapsed; the former holder is fenced', async () => {
    const h = await postgresBackend.fresh();
    handles.push(h);
    const clock = new SimulatedClock(1_000_000);
    const a = await proc(h.location, 'lab-a:101', clock);
    const b = await proc(h.location, 'lab-b:202', clock);
    await Promise.all([a.start(), b.start()]);
    // Every connector held by exactly one of the two, token 1.
    const held = [...a.claimed, ...b.claimed].map((l) => l.connectorId).sort();
    expect(held).toEqual(CONNECTORS);
    expect([...a.claimed, ...b.claimed].every((l) => l.token === 1 && l.previous === null)).toBe(true);
    expect((await listEndpointLeases(a.db)).length).toBe(CONNECTORS.length);

    // Both fences pass for what each holds, in a real transaction.
    const mine = a.claimed[0] ?? b.claimed[0]!;
    const holder = a.claimed.length ? a : b;
    await holder.db.tx((t) => holder.own.fenceFor(mine.connectorId)(t));

    // The holder stops renewing (as if paused); a third process, past the lease and the skew, takes all of it.
    holder.own.stopClaiming();
    const later = new SimulatedClock(clock.now() + TIMING.ttlMs + TIMING.skewMs + 1);
    const c = await proc(h.location, 'lab-c:303', later);
    await c.start();
    const takenFromHolder = c.claimed.filter((l) => l.previous === (holder === a ? 'lab-a:101' : 'lab-b:202'));
    expect(takenFromHolder.map((l) => l.connectorId)).toContain(mine.connectorId);
    expect(takenFromHolder.every((l) => l.token === 2)).toBe(true);

    // The former holder's write under the fence is refused in its transaction, nothing written; it detaches.
    await holder.db.exec('CREATE TABLE IF NOT EXISTS fenced_probe (x TEXT)');
    const code = await codeOf(
      holder.db.tx(async (t) => {
        await holder.own.fenceFor(mine.connectorId)(t);
        await t.run('INSERT INTO fenced_probe (x) VALUES (?)', ['stale']);
      }),
    );
    expect(code).toBe(ErrorCode.HOST_ENDPOINT_LEASE_LOST);
    expect(await holder.db.all('SELECT x FROM fenced_probe')).toEqual([]);
    expect(holder.own.holds(mine.connectorId)).toBe(false);
    await new Promise((r) => setTimeout(r, 0));
    expect(holder.lost).toContain(mine.connectorId);
    await c.db.tx((t) => c.own.fenceFor(mine.connectorId)(t));

    // A clean close lets C's leases go at once (expiry 0): anyone may claim them at the next sweep.
    await c.own.close();
    const rows = await listEndpointLeases(a.db);
    expect(rows.filter((r) => r.owner === 'lab-c:303').every((r) => r.expires_at_ms === 0)).toBe(true);
  });

  it('a ledger append under a lost endpoint lease is refused alone: the rest of its batch commits', async () => {
    const h = await postgresBackend.fresh();
    handles.push(h);
    const clock = new SimulatedClock(2_000_000);
    const a = await proc(h.location, 'lab-a:101', clock);
    await a.start();
    const lease = a.claimed[0]!;
    const ledger = await openLedger(a.db, { clock });
    const fence = { fence: a.own.fenceFor(lease.connectorId) };
    await ledger.appendBatch([{ kind: 'error', note: 'fenced while held' }], fence);

    // A stops renewing; B, past the lease and the skew, takes it over.
    a.own.stopClaiming();
    const b = await proc(h.location, 'lab-b:202', new SimulatedClock(clock.now() + TIMING.ttlMs + TIMING.skewMs + 1));
    await b.start();
    expect(b.claimed.map((l) => l.connectorId)).toContain(lease.connectorId);

    const before = (await ledger.head()).seq;
    // Queued together (one commit when they share a flush): only the fenced one is refused.
    const [refused, plain] = await Promise.allSettled([
      ledger.appendBatch([{ kind: 'error', note: 'stale endpoint holder' }], fence),
      ledger.appendBatch([{ kind: 'error', note: 'not under that lease' }]),
    ]);
    expect(refused.status === 'rejected' && (refused.reason as HostError).code).toBe(
      ErrorCode.HOST_ENDPOINT_LEASE_LOST,
    );
    expect(plain.status).toBe('fulfilled');
    expect((await ledger.range(before + 1)).map((e) => e.note)).toEqual(['not under that lease']);
    expect((await ledger.verify()).ok).toBe(true);
  });

  it('a sweep claims at most its fair share: ceil(enabled / live processes)', async () => {
    const h = await postgresBackend.fresh();
    handles.push(h);
    const clock = new SimulatedClock(1_000_000);
    const a = await proc(h.location, 'lab-a:101', clock);
    await a.start();
    await ensureEndpointHosts(a.db);
    // Three live processes (a's own row is written by its start): a fresh sweep of a fourth claims ceil(6 / 3) = 2 at most.
    a.own.stopClaiming();
    await a.db.run('DELETE FROM endpoint_leases');
    for (const o of ['lab-b:202', 'lab-c:303']) await beatEndpointHost(a.db, o, clock.now(), TIMING.ttlMs);
    const live = await liveEndpointHosts(a.db, clock.now(), TIMING.skewMs);
    expect(live.map((l) => l.owner)).toEqual(['lab-a:101', 'lab-b:202', 'lab-c:303']);
    const share = fairShare(CONNECTORS.length, live.length);
    expect(share).toBe(2);
    const first = await claimEndpoints(a.db, 'lab-b:202', clock.now(), {
      ...TIMING,
      connectorIds: CONNECTORS,
      held: new Map(),
      limit: share,
    });
    expect(first).toHaveLength(2);
    // One already held: one more at most; the rest stay for the others.
    const next = await claimEndpoints(a.db, 'lab-c:303', clock.now(), {
      ...TIMING,
      connectorIds: CONNECTORS,
      held: new Map([[CONNECTORS[5]!, 1]]),
      limit: share - 1,
    });
    expect(next).toHaveLength(1);
    expect((await listEndpointLeases(a.db)).length).toBe(3);
  });
});
