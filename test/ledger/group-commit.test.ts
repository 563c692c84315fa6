// Group commit in the ledger writer (issue 21 item 1): appends from many endpoints that arrive while a commit is in
// flight ride in the next one; every caller resolves only once the commit holding its entry has returned (on SQLite
// that includes the WAL fsync, see sqlite-sync.test.ts); the chain order is the commit order; a failed commit rejects
// every caller in it with MHS.HOST.LEDGER_UNAVAILABLE and writes none of its entries.
import { fsync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode, RealClock } from '../../src/core/index.js';
import { openDb, openLedger } from '../../src/ledger/index.js';
import type { Db, DurableLedger, LedgerEntry, SqliteDb } from '../../src/ledger/index.js';
import { BACKENDS, tempDir } from './helpers.js';
import type { StoreHandle } from './helpers.js';

/**
 * The real store, observed at its commits: `durableThrough` is the highest seq a returned commit holds; `hold`
 * keeps the next commit from returning (a slow fsync) until released; `failNext` makes the next commit throw after
 * its statements ran, so the database rolls it back.
 */
class ObservedDb implements Db {
  readonly dialect: Db['dialect'];
  readonly location: string;
  durableThrough = -1;
  /** Ledger entries per returned commit that wrote some. */
  readonly batches: number[] = [];
  failNext = false;
  private held: Promise<void> | null = null;
  private release: (() => void) | null = null;

  constructor(private readonly inner: Db) {
    this.dialect = inner.dialect;
    this.location = inner.location;
  }

  hold(): void {
    this.held = new Promise((r) => (this.release = r));
  }

  unhold(): void {
    this.release?.();
    this.held = null;
  }

  exec(sql: string): Promise<void> {
    return this.inner.exec(sql);
  }
  all<T>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    return this.inner.all<T>(sql, params);
  }
  rows<T extends unknown[]>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    return this.inner.rows<T>(sql, params);
  }
  get<T>(sql: string, params?: readonly unknown[]): Promise<T | undefined> {
    return this.inner.get<T>(sql, params);
  }
  run(sql: string, params?: readonly unknown[]): Promise<{ changes: number }> {
    return this.inner.run(sql, params);
  }
  close(): Promise<void> {
    return this.inner.close();
  }

  async tx<T>(fn: (t: Db) => Promise<T>): Promise<T> {
    let before = 0;
    let after = 0;
    const out = await this.inner.tx(async (t) => {
      before = await count(t);
      const r = await fn(t);
      after = await count(t);
      if (this.failNext) {
        this.failNext = false;
        throw new Error('injected commit failure');
      }
      return r;
    });
    if (this.held) await this.held;
    if (after > before) {
      this.batches.push(after - before);
      const head = await this.inner.get<{ s: number }>('SELECT max(seq) AS s FROM ledger_entries');
      this.durableThrough = Number(head?.s);
    }
    return out;
  }
}

async function count(t: Db): Promise<number> {
  return Number((await t.get<{ n: number }>('SELECT count(*) AS n FROM ledger_entries'))?.n ?? 0);
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe.each(BACKENDS)('group commit: $name', (backend) => {
  const open: Array<{ db: Db; h: StoreHandle }> = [];
  afterEach(async () => {
    for (const o of open.splice(0)) {
      await o.db.close();
      await o.h.cleanup();
    }
  });

  async function store(): Promise<{ db: ObservedDb; ledger: DurableLedger }> {
    const h = await backend.fresh();
    const inner = await openDb(h.location);
    open.push({ db: inner, h });
    // The tables and genesis first, then the writer under observation.
    (await openLedger(inner, { clock: new RealClock() })).dispose();
    const db = new ObservedDb(inner);
    return { db, ledger: await openLedger(db, { clock: new RealClock() }) };
  }

  it('concurrent intents and receipts of 40 endpoints: one verifying chain, none resolved before its commit', async () => {
    const { db, ledger } = await store();
    const early: LedgerEntry[] = [];
    const check = (e: LedgerEntry) => {
      if (e.seq > db.durableThrough) early.push(e);
      return e;
    };
    const endpoints = Array.from({ length: 40 }, (_, i) => `mhs://group/${i}`);
    const perEndpoint = 6;
    await Promise.all(
      endpoints.map(async (endpoint_id, k) => {
        for (let i = 0; i < perEndpoint; i++) {
          const command_id = `c-${k}-${i}`;
          await ledger.append({ kind: 'command.intent', endpoint_id, command_id }).then(check);
          // The endpoint's answer arrives a macrotask later, as from a transport.
          await tick();
          await ledger.append({ kind: 'error', endpoint_id, command_id, note: 'receipt stand-in' }).then(check);
        }
      }),
    );
    expect(early).toEqual([]);
    expect(await ledger.verify()).toMatchObject({ ok: true, count: 1 + endpoints.length * perEndpoint * 2 });
    // Each endpoint's entries are in its own order in the chain.
    for (const endpoint_id of endpoints.slice(0, 3)) {
      const mine = (await ledger.range(0)).filter((e) => e['endpoint_id'] === endpoint_id);
      expect(mine.map((e) => e['command_id'])).toEqual(
        Array.from({ length: perEndpoint * 2 }, (_, i) => `c-${endpoints.indexOf(endpoint_id)}-${i >> 1}`),
      );
    }
    // Grouped: far fewer commits than entries.
    const written = db.batches.reduce((a, b) => a + b, 0);
    expect(written).toBe(endpoints.length * perEndpoint * 2);
    expect(db.batches.length).toBeLessThan(written / 4);
  });

  it('appends arriving while a commit is in flight share the next commit, in arrival order', async () => {
    const { db, ledger } = await store();
    db.hold();
    const first = ledger.append({ kind: 'error', endpoint_id: 'mhs://group/a', note: 'in flight' });
    const later: Promise<LedgerEntry>[] = [];
    for (const id of ['b', 'c', 'd', 'e']) {
      await tick();
      later.push(ledger.append({ kind: 'error', endpoint_id: `mhs://group/${id}`, note: 'queued' }));
    }
    let settled = false;
    void Promise.all([first, ...later]).then(() => (settled = true));
    await tick();
    expect(settled).toBe(false);
    const before = db.batches.length;
    db.unhold();
    const [a, ...rest] = await Promise.all([first, ...later]);
    expect(db.batches.slice(before)).toEqual([1, 4]);
    expect(rest.map((e) => e.seq)).toEqual([1, 2, 3, 4].map((k) => (a as LedgerEntry).seq + k));
    expect(rest.map((e) => e['endpoint_id'])).toEqual(['b', 'c', 'd', 'e'].map((id) => `mhs://group/${id}`));
  });

  it('a failed commit rejects every caller in it with MHS.HOST.LEDGER_UNAVAILABLE and writes none of it', async () => {
    const { db, ledger } = await store();
    await ledger.append({ kind: 'error', note: 'before' });
    const head = await ledger.head();
    db.hold();
    const inFlight = ledger.append({ kind: 'error', note: 'in flight' });
    const doomed: Promise<unknown>[] = [];
    for (let i = 0; i < 5; i++) {
      await tick();
      doomed.push(
        ledger.append({ kind: 'command.intent', endpoint_id: `mhs://group/${i}`, command_id: `x${i}` }).then(
          () => 'resolved',
          (e: { code?: string }) => e.code,
        ),
      );
    }
    db.failNext = false;
    // The next commit (the five queued appends) fails once the in-flight one has returned.
    const committed = inFlight.then((e) => ((db.failNext = true), e));
    db.unhold();
    const kept = await committed;
    expect(await Promise.all(doomed)).toEqual(Array(5).fill(ErrorCode.HOST_LEDGER_UNAVAILABLE));
    expect((await ledger.head()).seq).toBe(kept.seq);
    expect(kept.seq).toBe(head.seq + 1);
    expect(await ledger.byCommand('x0')).toEqual([]);
    expect(await ledger.verify()).toMatchObject({ ok: true, count: kept.seq + 1 });
    // The writer goes on: the next append follows the kept head.
    await ledger.probe();
    expect((await ledger.append({ kind: 'error', note: 'after' })).seq).toBe(kept.seq + 1);
  });
});

describe('group commit on SQLite at synchronous=FULL', () => {
  it('appends of other endpoints made while a WAL fsync is outstanding share the next commit and its one fsync', async () => {
    const t = tempDir();
    let hold: (() => void) | null = null;
    let held = false;
    const db = (await openDb(join(t.dir, 'host.db'), {
      sqlite: {
        synchronous: 'FULL',
        fsync: (fd) =>
          new Promise<void>((resolve, reject) => {
            const go = () => fsync(fd, (err) => (err ? reject(err) : resolve()));
            if (held) hold = go;
            else go();
          }),
      },
    })) as SqliteDb;
    try {
      const ledger = await openLedger(db, { clock: new RealClock() });
      const syncs0 = db.walSyncs;
      held = true;
      const first = ledger.append({ kind: 'command.intent', endpoint_id: 'mhs://sq/0', command_id: 'k0' });
      while (!hold) await tick();
      // The event loop runs while the fsync is outstanding: four more endpoints append, each in its own macrotask.
      const later: Promise<LedgerEntry>[] = [];
      for (let i = 1; i <= 4; i++) {
        await tick();
        later.push(ledger.append({ kind: 'command.intent', endpoint_id: `mhs://sq/${i}`, command_id: `k${i}` }));
      }
      let firstDone = false;
      void first.then(() => (firstDone = true));
      await tick();
      expect(firstDone).toBe(false);
      held = false;
      (hold as unknown as () => void)();
      const [a, ...rest] = await Promise.all([first, ...later]);
      // Two commits, two fsyncs: the first alone, the four that queued during its fsync together.
      expect(db.walSyncs - syncs0).toBe(2);
      expect(rest.map((e) => e.seq)).toEqual([1, 2, 3, 4].map((k) => (a as LedgerEntry).seq + k));
      expect(await ledger.verify()).toMatchObject({ ok: true });
      ledger.dispose();
    } finally {
      await db.close();
      t.cleanup();
    }
  });
});
