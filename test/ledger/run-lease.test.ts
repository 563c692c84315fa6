// Guarantees (issue 19), on a real PostgreSQL store shared by several host processes (a schema per store; skipped
// without MHS_TEST_PG_URL): a run is leased by the process that inserted it (token 1); of processes sweeping at once
// for lapsed runs each run is taken by exactly one (FOR UPDATE SKIP LOCKED), a run nobody renewed is taken over with
// a higher fencing token, and from then on the former owner's appends and patches are refused in their transaction
// with MHS.HOST.RUN_LEASE_LOST (nothing written) while the new owner's go through; a renewal that finds the lease
// taken over tells the former owner to step down; a clean close lets the leases go at once; a terminal event ends the
// lease. A ledger append made under a run's fence (the intent of an MHS command a node sends) is refused the same way
// once the lease was taken over, alone in its batch. On SQLite nothing of this applies: no fence, no lease table.
import { hostname } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode, HostError, SimulatedClock } from '../../src/core/index.js';
import { openDb, openLedger } from '../../src/ledger/index.js';
import type { Db } from '../../src/ledger/index.js';
import { listRunLeases } from '../../src/openwop/run-leases.js';
import { RunOwnership } from '../../src/openwop/run-ownership.js';
import { OpenwopStore } from '../../src/openwop/store.js';
import type { WorkflowDefinition } from '../../src/openwop/types.js';
import { PG_URL, postgresBackend, sqliteBackend } from './helpers.js';
import type { StoreHandle } from './helpers.js';

const TIMING = { ttlMs: 3_000, skewMs: 500 };
const WF: WorkflowDefinition = {
  id: 'lease-wf',
  name: 'lease',
  version: '1',
  nodes: [{ id: 'n', typeId: 'core.noop', name: 'n', position: { x: 0, y: 0 }, config: {}, inputs: {} }],
  edges: [],
  triggers: [{ id: 'manual', type: 'manual' }],
  variables: [],
  metadata: {},
  settings: {},
} as unknown as WorkflowDefinition;
const log = (message: string) => ({ type: 'log.appended', payload: { level: 'info', message } });

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    return err instanceof HostError ? err.code : String(err);
  }
}

describe.skipIf(!PG_URL)('run leases on one PostgreSQL store', () => {
  const handles: StoreHandle[] = [];
  const dbs: Db[] = [];
  const owners: RunOwnership[] = [];
  afterEach(async () => {
    for (const o of owners.splice(0)) await o.close();
    for (const d of dbs.splice(0)) await d.close().catch(() => undefined);
    for (const h of handles.splice(0)) await h.cleanup();
  });

  /** A host process: its own pool on the shared store, its own clock, its run ownership and fenced store. */
  async function proc(location: string, owner: string, clock: SimulatedClock) {
    const db = await openDb(location);
    dbs.push(db);
    const own = new RunOwnership(db, clock, { owner, timing: TIMING });
    owners.push(own);
    const store = new OpenwopStore(db, clock);
    store.fence = own;
    await store.init();
    const lost: string[] = [];
    const claimed: string[] = [];
    const start = () =>
      own.start({
        claimed: async (ids) => void claimed.push(...ids),
        lost: (id) => void lost.push(id),
      });
    return { db, store, own, lost, claimed, start, clock };
  }
  async function location(): Promise<string> {
    const h = await postgresBackend.fresh();
    handles.push(h);
    return h.location;
  }
  const newRun = (store: OpenwopStore) =>
    store.createRun({ workflow: WF, inputs: {}, variables: {} }).then((r) => r.run.runId);

  it('the inserting process holds a new run with token 1; a lapsed run is taken by exactly one of two sweeping processes', async () => {
    const loc = await location();
    const clock = new SimulatedClock(1_000_000);
    const a = await proc(loc, 'lab-a:101', clock);
    const runs = [];
    for (let i = 0; i < 12; i++) runs.push(await newRun(a.store));
    expect((await listRunLeases(a.db)).map((l) => [l.owner, l.token])).toEqual(runs.map(() => ['lab-a:101', 1]));

    // A stops renewing (it never started its timer: as if it died). Within the lease nobody takes anything.
    const b = await proc(loc, 'lab-b:202', new SimulatedClock(clock.now() + TIMING.ttlMs - 1));
    expect(await b.start()).toEqual([]);
    await b.own.close();

    // Past the lease and the skew, B and C sweep at the same moment: disjoint sets, together every run, token 2.
    const later = clock.now() + TIMING.ttlMs + TIMING.skewMs + 1;
    const b2 = await proc(loc, 'lab-b:202', new SimulatedClock(later));
    const c2 = await proc(loc, 'lab-c:303', new SimulatedClock(later));
    const [byB, byC] = await Promise.all([b2.start(), c2.start()]);
    expect(byB.filter((id) => byC.includes(id))).toEqual([]);
    expect([...byB, ...byC].sort()).toEqual([...runs].sort());
    const leases = await listRunLeases(a.db);
    expect(new Set(leases.map((l) => l.token))).toEqual(new Set([2]));
    for (const l of leases) expect(byB.includes(l.run_id) ? 'lab-b:202' : 'lab-c:303').toBe(l.owner);
  });

  it('a sweep never takes over a run its own process created while the sweep was under way', async () => {
    const loc = await location();
    const clock = new SimulatedClock(1_000_000);
    // This machine's own name (hostname:pid): the sweep's branch for owners on this machine applies to it.
    const a = await proc(loc, `${hostname()}:${process.pid}`, clock);
    await a.start();
    const created: string[] = [];
    let creating = true;
    const sweeping = (async () => {
      // Every tick renews and sweeps (period = ttl / 3), back to back while runs are being created.
      while (creating) {
        clock.advance(TIMING.ttlMs / 3);
        await new Promise((r) => setTimeout(r, 1));
      }
    })();
    const makers = Array.from({ length: 4 }, async () => {
      for (let i = 0; i < 40; i++) created.push(await newRun(a.store));
    });
    await Promise.all(makers);
    creating = false;
    await sweeping;
    expect(created).toHaveLength(160);
    expect(a.claimed).toEqual([]);
    const leases = await listRunLeases(a.db);
    expect(leases.filter((l) => l.token !== 1).map((l) => l.run_id)).toEqual([]);
  });

  it('a renewal while the transaction inserting a run lease is still open does not give that run up', async () => {
    const loc = await location();
    const clock = new SimulatedClock(3_000_000);
    const a = await proc(loc, 'lab-a:101', clock);
    const lost: string[] = [];
    let swept = 0;
    await a.own.start({ claimed: async () => undefined, lost: (id) => void lost.push(id), swept: () => void swept++ });
    let commit!: () => void;
    const gate = new Promise<void>((r) => (commit = r));
    let inserted!: () => void;
    const insertedInTx = new Promise<void>((r) => (inserted = r));
    // The insert is held uncommitted (invisible to the renewal's UPDATE) while a renewal and a sweep run. It is made on
    // a second connection pool: this process's own pool would queue the sweep's transaction behind it.
    const db2 = await openDb(loc);
    dbs.push(db2);
    const creating = db2.tx(async (t) => {
      expect(await a.own.claim(t, 'run_race')).toBe(true);
      inserted();
      await gate;
    });
    await insertedInTx;
    const before = swept;
    clock.advance(TIMING.ttlMs / 3);
    while (swept === before) await new Promise((r) => setTimeout(r, 5));
    commit();
    await creating;
    expect(lost).toEqual([]);
    expect(a.own.holds('run_race')).toBe(true);
    // Committed now: the next renewal finds and renews it.
    const next = swept;
    clock.advance(TIMING.ttlMs / 3);
    while (swept === next) await new Promise((r) => setTimeout(r, 5));
    expect(lost).toEqual([]);
    expect((await listRunLeases(a.db)).map((l) => [l.run_id, l.owner, l.token])).toEqual([
      ['run_race', 'lab-a:101', 1],
    ]);
  });

  it('after a takeover the former owner cannot append or patch (refused, nothing written); the new owner can; its renewal says step down', async () => {
    const loc = await location();
    const clock = new SimulatedClock(2_000_000);
    const a = await proc(loc, 'lab-a:101', clock);
    expect(await a.start()).toEqual([]);
    const runId = await newRun(a.store);
    await a.store.append(runId, [log('a writes while it holds the lease')]);

    // A is paused: its clock (and its renewals) stand still while B's moves past the lease.
    const b = await proc(loc, 'lab-b:202', new SimulatedClock(clock.now() + TIMING.ttlMs + TIMING.skewMs + 1));
    expect(await b.start()).toEqual([runId]);
    expect((await listRunLeases(b.db)).map((l) => [l.run_id, l.owner, l.token])).toEqual([[runId, 'lab-b:202', 2]]);

    // A wakes up: its writes are fenced off in their own transaction.
    expect(await codeOf(a.store.append(runId, [log('stale owner')]))).toBe(ErrorCode.HOST_RUN_LEASE_LOST);
    expect(await codeOf(a.store.patchRun(runId, { status: 'cancelling' }))).toBe(ErrorCode.HOST_RUN_LEASE_LOST);
    expect(a.own.holds(runId)).toBe(false);
    const events = await b.store.events(runId);
    expect(events.map((e) => e.payload.message)).toEqual(['a writes while it holds the lease']);
    expect((await b.store.getRun(runId))!.status).toBe('pending');

    await b.store.append(runId, [log('new owner')]);
    expect((await b.store.events(runId)).map((e) => e.sequence)).toEqual([0, 1]);

    // A second paused owner that never wrote learns it at its next renewal instead.
    const c = await proc(loc, 'lab-c:303', clock);
    expect(await c.start()).toEqual([]);
    const other = await newRun(c.store);
    const d = await proc(loc, 'lab-d:404', new SimulatedClock(clock.now() + TIMING.ttlMs + TIMING.skewMs + 1));
    expect(await d.start()).toEqual([other]);
    c.clock.advance(TIMING.ttlMs / 3 + 1);
    await expect.poll(() => c.lost).toEqual([other]);
    expect(c.own.holds(other)).toBe(false);
  });

  it('a ledger append under a former owner’s run fence (a command intent) is refused, nothing written; the rest of its batch commits', async () => {
    const loc = await location();
    const clock = new SimulatedClock(3_000_000);
    const a = await proc(loc, 'lab-a:101', clock);
    expect(await a.start()).toEqual([]);
    const runId = await newRun(a.store);
    const ledger = await openLedger(a.db, { clock });
    const fence = { fence: (t: Db) => a.own.check(t, runId) };
    await ledger.appendBatch([{ kind: 'error', note: 'fenced while held' }], fence);

    const b = await proc(loc, 'lab-b:202', new SimulatedClock(clock.now() + TIMING.ttlMs + TIMING.skewMs + 1));
    expect(await b.start()).toEqual([runId]);
    const before = (await ledger.head()).seq;
    // Queued together (one commit when they share a flush): only the fenced one is refused.
    const [refused, plain] = await Promise.allSettled([
      ledger.appendBatch([{ kind: 'error', note: 'stale owner' }], fence),
      ledger.appendBatch([{ kind: 'error', note: 'not a run side effect' }]),
    ]);
    expect(refused.status === 'rejected' && (refused.reason as HostError).code).toBe(ErrorCode.HOST_RUN_LEASE_LOST);
    expect(plain.status).toBe('fulfilled');
    const after = await ledger.range(before + 1);
    expect(after.map((e) => e.note)).toEqual(['not a run side effect']);
    expect((await ledger.verify()).ok).toBe(true);
  });

  it('renewals keep a live owner’s runs; a clean close lets them go at once; a terminal event ends the lease', async () => {
    const loc = await location();
    const clock = new SimulatedClock(3_000_000);
    const a = await proc(loc, 'lab-a:101', clock);
    await a.start();
    const kept = await newRun(a.store);
    const ended = await newRun(a.store);
    await a.store.append(ended, [log('x')], { status: 'running' });
    await a.store.append(ended, [{ type: 'run.completed', payload: { outputs: {}, durationMs: 1 } }], {
      status: 'completed',
    });
    expect((await listRunLeases(a.db)).map((l) => l.run_id)).toEqual([kept]);

    // A renews on its clock well past several lease lengths: B, whose clock moves with it, takes nothing.
    const b = await proc(loc, 'lab-b:202', clock);
    // A renewal re-arms its timer when its write is done, which may be after the test moved the clock: advance(0)
    // fires a timer armed late at the current time.
    const renewedPast = async (before: number): Promise<boolean> => {
      for (let n = 0; n < 300; n++) {
        clock.advance(0);
        if ((await listRunLeases(a.db))[0]!.expires_at_ms > before) return true;
        await new Promise((r) => setTimeout(r, 10));
      }
      return false;
    };
    for (let i = 0; i < 6; i++) {
      const before = (await listRunLeases(a.db))[0]!.expires_at_ms;
      clock.advance(TIMING.ttlMs / 3 + 1);
      expect(await renewedPast(before)).toBe(true);
    }
    expect(await b.start()).toEqual([]);
    expect(a.lost).toEqual([]);

    await a.own.close();
    const c = await proc(loc, 'lab-c:303', clock);
    expect(await c.start()).toEqual([kept]);
  });
});

describe('run leases on SQLite', () => {
  it('the store has no fence and no lease table: one process drives every run', async () => {
    const h = await sqliteBackend.fresh();
    const db = await openDb(h.location);
    try {
      const store = new OpenwopStore(db, new SimulatedClock(1_000));
      await store.init();
      expect(store.fence).toBeUndefined();
      const { run } = await store.createRun({ workflow: WF, inputs: {}, variables: {} });
      await store.append(run.runId, [log('no lease needed')]);
      const t = await db.get(`SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'run_leases'`);
      expect(t).toBeUndefined();
    } finally {
      await db.close();
      await h.cleanup();
    }
  });
});
