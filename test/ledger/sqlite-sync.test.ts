// Guarantees: the store is fsynced on every commit (synchronous=FULL) unless the operator sets MHS_SQLITE_SYNC=normal;
// any other value is refused with MHS.HOST.CONFIG_INVALID before a file is created. Under FULL (WAL) a write resolves
// only after the WAL's fsync has finished, off the event loop; a failed fsync fails the write.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { fsync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/core/index.js';
import { SQLITE_SYNC_ENV_VAR, openDb } from '../../src/ledger/index.js';
import type { Db, SqliteDb } from '../../src/ledger/index.js';

const dir = mkdtempSync(join(tmpdir(), 'mhs-sync-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function level(file: string, env: Record<string, string | undefined>): Promise<string> {
  const db = await openDb(join(dir, file), { env });
  try {
    return (db as SqliteDb).synchronous;
  } finally {
    await db.close();
  }
}

/** An fsync held until the test releases it, counting the calls. */
function heldFsync() {
  const waiting: Array<() => void> = [];
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    release: () => waiting.splice(0).forEach((r) => r()),
    fn: (fd: number) => {
      calls++;
      return new Promise<void>((resolve, reject) =>
        waiting.push(() => fsync(fd, (err) => (err ? reject(err) : resolve()))),
      );
    },
  };
}

describe('SQLite durability level', () => {
  it('defaults to FULL and takes NORMAL from the environment, in any case', async () => {
    expect(await level('a.db', {})).toBe('FULL');
    expect(await level('b.db', { [SQLITE_SYNC_ENV_VAR]: 'full' })).toBe('FULL');
    expect(await level('c.db', { [SQLITE_SYNC_ENV_VAR]: ' Normal ' })).toBe('NORMAL');
  });

  it('refuses any other value before creating the file', async () => {
    const file = join(dir, 'bad', 'x.db');
    await expect(openDb(file, { env: { [SQLITE_SYNC_ENV_VAR]: 'off' } })).rejects.toMatchObject({
      code: ErrorCode.HOST_CONFIG_INVALID,
    });
    expect(existsSync(file)).toBe(false);
  });

  it('FULL: a write resolves only after its WAL fsync, which leaves the event loop free; reads sync nothing', async () => {
    const held = heldFsync();
    const db = await openDb(join(dir, 'held.db'), { sqlite: { synchronous: 'FULL', fsync: held.fn } });
    try {
      const ddl = db.exec('CREATE TABLE t (v INTEGER)');
      while (held.calls < 1) await new Promise((r) => setTimeout(r, 1));
      held.release();
      await ddl;
      let done = false;
      const write = db.tx((t) => t.run('INSERT INTO t (v) VALUES (1)')).then(() => (done = true));
      // The event loop turns (timers fire) while the fsync is outstanding, and the write has not resolved.
      for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 1));
      expect(held.calls).toBe(2);
      expect(done).toBe(false);
      held.release();
      await write;
      expect(done).toBe(true);
      await db.get('SELECT count(*) AS n FROM t');
      await db.tx((t) => t.all('SELECT v FROM t'));
      expect(held.calls).toBe(2);
      expect((db as SqliteDb).walSyncs).toBe(2);
    } finally {
      held.release();
      await db.close();
    }
  });

  it('FULL: a failed fsync fails the write with MHS.HOST.LEDGER_UNAVAILABLE to its caller', async () => {
    let fail = false;
    const db = await openDb(join(dir, 'eio.db'), {
      sqlite: {
        fsync: (fd) =>
          fail
            ? Promise.reject(Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' }))
            : new Promise<void>((resolve, reject) => fsync(fd, (err) => (err ? reject(err) : resolve()))),
      },
    });
    try {
      await db.exec('CREATE TABLE t (v INTEGER)');
      fail = true;
      await expect(db.run('INSERT INTO t (v) VALUES (1)')).rejects.toMatchObject({ code: 'EIO' });
      fail = false;
      // The next write still works and is synced.
      await db.run('INSERT INTO t (v) VALUES (2)');
    } finally {
      await db.close();
    }
  });

  it('FULL: a statement that writes nothing before the first write (no WAL file yet) needs no fsync', async () => {
    const db = await openDb(join(dir, 'fresh.db'), { sqlite: { synchronous: 'FULL' } });
    try {
      await db.run('PRAGMA foreign_keys = ON');
      expect((db as SqliteDb).walSyncs).toBe(0);
      await db.exec('CREATE TABLE t (v INTEGER)');
      expect((db as SqliteDb).walSyncs).toBe(1);
    } finally {
      await db.close();
    }
  });

  it('NORMAL issues no fsync of its own', async () => {
    let calls = 0;
    const db: Db = await openDb(join(dir, 'normal.db'), {
      sqlite: { synchronous: 'NORMAL', fsync: () => Promise.resolve(void calls++) },
    });
    try {
      await db.exec('CREATE TABLE t (v INTEGER)');
      await db.run('INSERT INTO t (v) VALUES (1)');
      expect(calls).toBe(0);
    } finally {
      await db.close();
    }
  });
});
