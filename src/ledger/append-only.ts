import type { Db } from './db.js';

/** Marker in the error a refused UPDATE/DELETE raises (SQLite message; PostgreSQL SQLSTATE `MH001`). */
export const APPEND_ONLY_MARK = 'MHS.HOST.APPEND_ONLY';
const PG_SQLSTATE = 'MH001';

function assertIdent(table: string): void {
  if (!/^[a-z_][a-z0-9_]*$/.test(table)) throw new TypeError(`not a plain table name: ${table}`);
}

function deleteTriggerDdl(dialect: Db['dialect'], table: string): string {
  return dialect === 'sqlite'
    ? `CREATE TRIGGER ${table}_no_delete BEFORE DELETE ON ${table} BEGIN SELECT RAISE(ABORT, '${APPEND_ONLY_MARK}: ${table}'); END;`
    : `CREATE TRIGGER ${table}_no_delete BEFORE DELETE ON ${table} FOR EACH ROW EXECUTE FUNCTION mhs_append_only();`;
}

/**
 * DDL that makes `table` append-only at the database level: triggers refuse UPDATE and DELETE
 * (and TRUNCATE in PostgreSQL). Append it to a migration's DDL (issue 4; HOST-051).
 */
export function appendOnlyDdl(dialect: Db['dialect'], table: string): string {
  assertIdent(table);
  if (dialect === 'sqlite') {
    return [
      `CREATE TRIGGER ${table}_no_update BEFORE UPDATE ON ${table} BEGIN SELECT RAISE(ABORT, '${APPEND_ONLY_MARK}: ${table}'); END;`,
      deleteTriggerDdl(dialect, table),
    ].join('\n');
  }
  return [
    `CREATE OR REPLACE FUNCTION mhs_append_only() RETURNS trigger LANGUAGE plpgsql AS $mhs$
BEGIN
  RAISE EXCEPTION '${APPEND_ONLY_MARK}: %', TG_TABLE_NAME USING ERRCODE = '${PG_SQLSTATE}';
END
$mhs$;`,
    `CREATE TRIGGER ${table}_no_update BEFORE UPDATE ON ${table} FOR EACH ROW EXECUTE FUNCTION mhs_append_only();`,
    deleteTriggerDdl(dialect, table),
    `CREATE TRIGGER ${table}_no_truncate BEFORE TRUNCATE ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION mhs_append_only();`,
  ].join('\n');
}

/** True when `err` is a refusal by an append-only trigger. */
export function isAppendOnlyViolation(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as { code?: unknown; message?: unknown };
  return e.code === PG_SQLSTATE || (typeof e.message === 'string' && e.message.includes(APPEND_ONLY_MARK));
}

/**
 * The one maintenance path through the append-only guard (retention pruning, HOST-056): inside a
 * single transaction it drops the table's DELETE trigger, runs `fn`, and recreates the trigger, so
 * no other connection ever sees the table unguarded. UPDATE stays refused throughout.
 */
export async function withDeleteAllowed<T>(db: Db, table: string, fn: (db: Db) => Promise<T>): Promise<T> {
  assertIdent(table);
  return db.tx(async (t) => {
    await t.exec(
      t.dialect === 'sqlite' ? `DROP TRIGGER ${table}_no_delete` : `DROP TRIGGER ${table}_no_delete ON ${table}`,
    );
    const out = await fn(t);
    await t.exec(deleteTriggerDdl(t.dialect, table));
    return out;
  });
}
