/**
 * Migration `0007_ledger_lean_pages` (issue 21): fewer WAL pages per append on SQLite, where every page an append
 * dirties is a whole 4 KB frame written and fsynced before the append resolves.
 * - `ledger_entries` loses `UNIQUE(prev_digest)` (a random-key index: one more random leaf page per entry) and, on
 *   stores created before migration 0003, `UNIQUE(digest)`. In their place a `BEFORE INSERT` trigger refuses any row
 *   that is not the next seq after the head with the head's digest as its `prev_digest`: it only reads the last leaf,
 *   and it is stricter than the index (a gap or a link to an older entry is refused too), so with `seq` the key a
 *   fork stays impossible in the database (HOST-092). The writer reads the head inside `BEGIN IMMEDIATE`.
 * - The side tables kept in the append's transaction (`device_gates`, `ledger_unsettled`, `ledger_open_approvals`,
 *   `ledger_sent_permits`) become `WITHOUT ROWID` tables clustered on their key: one B-tree each instead of a rowid
 *   table plus its key's index, and `ledger_unsettled` loses its `seq` index (recovery sorts the few unsettled rows).
 * Existing rows, indexes and other triggers on the rebuilt tables (the append-only guard, the OpenWOP effect index)
 * are kept. PostgreSQL only drops `ledger_unsettled_seq`; it keeps its own table layout and `UNIQUE(prev_digest)`.
 */
import type { Db } from './db.js';

export const LEAN_PAGES_MIGRATION = '0007_ledger_lean_pages';

/** Marker in the error the link trigger raises. */
export const CHAIN_LINK_MARK = 'MHS.HOST.LEDGER_LINK';

const ENTRIES_COLUMNS = 'seq, prev_digest, digest, ts, kind, command_id, session_id, endpoint_id, line';

const LINK_TRIGGER = `CREATE TRIGGER ledger_entries_link BEFORE INSERT ON ledger_entries
WHEN (SELECT MAX(seq) FROM ledger_entries) IS NOT NULL
  AND (NEW.seq IS NOT (SELECT MAX(seq) FROM ledger_entries) + 1
    OR NEW.prev_digest IS NOT (SELECT digest FROM ledger_entries WHERE seq = NEW.seq - 1))
BEGIN SELECT RAISE(ABORT, '${CHAIN_LINK_MARK}: not the next entry after the head'); END;`;

/** The new shapes, created beside the old tables and filled from them by {@link rebuildLean}. */
const SQLITE_DDL = `CREATE TABLE ledger_entries_lean (
  seq INTEGER PRIMARY KEY,
  prev_digest TEXT NOT NULL,
  digest TEXT NOT NULL,
  ts TEXT NOT NULL,
  kind TEXT NOT NULL,
  command_id TEXT,
  session_id TEXT,
  endpoint_id TEXT,
  line TEXT NOT NULL
);
CREATE TABLE device_gates_lean (
  endpoint_id TEXT NOT NULL,
  device_id TEXT NOT NULL,
  command_id TEXT NOT NULL,
  reason TEXT NOT NULL,
  owner TEXT NOT NULL,
  since TEXT NOT NULL,
  PRIMARY KEY (endpoint_id, device_id)
) WITHOUT ROWID;
CREATE TABLE ledger_unsettled_lean (command_id TEXT PRIMARY KEY, seq BIGINT NOT NULL) WITHOUT ROWID;
CREATE TABLE ledger_open_approvals_lean (approval_id TEXT PRIMARY KEY, permit_id TEXT, seq BIGINT NOT NULL) WITHOUT ROWID;
CREATE TABLE ledger_sent_permits_lean (permit_id TEXT PRIMARY KEY, seq BIGINT NOT NULL) WITHOUT ROWID;`;

export function leanPagesDdl(d: Db['dialect']): string {
  return d === 'sqlite' ? SQLITE_DDL : 'DROP INDEX IF EXISTS ledger_unsettled_seq;';
}

const REBUILT: ReadonlyArray<readonly [string, string]> = [
  ['ledger_entries', ENTRIES_COLUMNS],
  ['device_gates', 'endpoint_id, device_id, command_id, reason, owner, since'],
  ['ledger_unsettled', 'command_id, seq'],
  ['ledger_open_approvals', 'approval_id, permit_id, seq'],
  ['ledger_sent_permits', 'permit_id, seq'],
];

/** Indexes dropped on purpose (the rest of a rebuilt table's named indexes and triggers are recreated). */
const DROPPED = new Set(['ledger_unsettled_seq']);

/**
 * Moves every row into the new tables and swaps them in, inside the migration's transaction; then recreates the old
 * tables' named indexes and triggers, and adds the link trigger.
 */
export async function rebuildLean(t: Db): Promise<void> {
  if (t.dialect !== 'sqlite') return;
  for (const [table, columns] of REBUILT) {
    const keep = await t.all<{ sql: string }>(
      `SELECT sql FROM sqlite_master WHERE tbl_name = ? AND type IN ('index', 'trigger') AND sql IS NOT NULL
       AND name NOT IN (${[...DROPPED].map(() => '?').join(', ')}) ORDER BY type, name`,
      [table, ...DROPPED],
    );
    const lean = `${table}_lean`;
    await t.exec(`INSERT INTO ${lean} (${columns}) SELECT ${columns} FROM ${table};
DROP TABLE ${table};
ALTER TABLE ${lean} RENAME TO ${table};`);
    for (const { sql } of keep) await t.exec(sql);
  }
  await t.exec(LINK_TRIGGER);
}
