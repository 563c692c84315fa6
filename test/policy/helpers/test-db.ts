// A minimal SQLite `Db` for policy tests until/unless src/ledger's openDb is available.
import Database from 'better-sqlite3';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Db } from '../../../src/ledger/db.js';

/** Opens a real SQLite file in a fresh temp dir, preferring the ledger layer's `openDb`. */
export async function openTestDb(): Promise<Db> {
  const file = join(mkdtempSync(join(tmpdir(), 'mhs-policy-')), 'host.db');
  const mod = (await import('../../../src/ledger/index.js' as string).catch(() => null)) as {
    openDb?: (location: string) => Promise<Db>;
  } | null;
  if (mod?.openDb) return mod.openDb(file);
  return sqliteDb(file);
}

function sqliteDb(file: string): Db {
  const raw = new Database(file);
  raw.pragma('journal_mode = WAL');
  let chain: Promise<unknown> = Promise.resolve();
  const db: Db = {
    dialect: 'sqlite',
    location: file,
    exec: async (sql) => void raw.exec(sql),
    all: async <T>(sql: string, params: readonly unknown[] = []) => raw.prepare(sql).all(...params) as T[],
    get: async <T>(sql: string, params: readonly unknown[] = []) => raw.prepare(sql).get(...params) as T | undefined,
    run: async (sql, params = []) => ({ changes: raw.prepare(sql).run(...params).changes }),
    tx: <T>(fn: (d: Db) => Promise<T>) => {
      const p = chain.then(async () => {
        raw.exec('BEGIN');
        try {
          const r = await fn(db);
          raw.exec('COMMIT');
          return r;
        } catch (e) {
          raw.exec('ROLLBACK');
          throw e;
        }
      });
      chain = p.catch(() => undefined);
      return p;
    },
    close: async () => void raw.close(),
  };
  return db;
}
