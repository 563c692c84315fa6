import { RealClock, isoAt, sha256Hex } from '../core/index.js';
import type { Db } from './db.js';

/** DDL for one migration: one text for both dialects, one per dialect, or a function of the dialect. */
export type MigrationDdl = string | { sqlite: string; postgres: string } | ((dialect: Db['dialect']) => string);

function ddlFor(db: Db, ddl: MigrationDdl): string {
  if (typeof ddl === 'string') return ddl;
  if (typeof ddl === 'function') return ddl(db.dialect);
  return ddl[db.dialect];
}

async function tableExists(db: Db, table: string): Promise<boolean> {
  const row =
    db.dialect === 'sqlite'
      ? await db.get(`SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = ?`, [table])
      : await db.get(
          `SELECT 1 AS x FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?`,
          [table],
        );
  return row !== undefined;
}

/**
 * Applies a named migration once per store, recorded in `schema_migrations` (name, checksum,
 * applied_at). Returns true when it ran now. A store where it is already recorded is not written,
 * so read-only stores can still be opened. In PostgreSQL an advisory lock serialises concurrent
 * migrators (several processes may share one database). Write DDL with portable types
 * (TEXT, INTEGER, BIGINT; JSON as TEXT) or pass one text per dialect.
 * `after`, when given, runs in the same transaction after the DDL (e.g. to fill a new table from existing rows).
 * Rejects with the driver's error when the DDL fails; nothing of that migration is kept.
 */
export async function migrate(
  db: Db,
  name: string,
  ddl: MigrationDdl,
  after?: (t: Db) => Promise<void>,
): Promise<boolean> {
  if ((await tableExists(db, 'schema_migrations')) && (await isApplied(db, name))) return false;
  const sql = ddlFor(db, ddl);
  return db.tx(async (t) => {
    if (t.dialect === 'postgres') await t.get(`SELECT pg_advisory_xact_lock(hashtext('mhs.schema_migrations'))`);
    await t.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, checksum TEXT NOT NULL, applied_at TEXT NOT NULL)',
    );
    if (await isApplied(t, name)) return false;
    await t.exec(sql);
    await after?.(t);
    await t.run('INSERT INTO schema_migrations (name, checksum, applied_at) VALUES (?, ?, ?)', [
      name,
      sha256Hex(sql),
      isoAt(new RealClock().now()),
    ]);
    return true;
  });
}

async function isApplied(db: Db, name: string): Promise<boolean> {
  return (await db.get('SELECT 1 AS x FROM schema_migrations WHERE name = ?', [name])) !== undefined;
}

/** Names of the migrations applied to this store, in name order. */
export async function appliedMigrations(db: Db): Promise<string[]> {
  if (!(await tableExists(db, 'schema_migrations'))) return [];
  const rows = await db.all<{ name: string }>('SELECT name FROM schema_migrations ORDER BY name');
  return rows.map((r) => r.name);
}
