/**
 * What start-up recovery needs, kept in two small side tables by the ledger writer in each append's own transaction
 * (issue 21 item 4), so a start reads only what is unsettled, never the whole ledger (HOST-091, 041, 070):
 * - `ledger_unsettled`: one row per `command.intent` without an outcome (removed by the entry that settles it);
 * - `ledger_open_approvals`: one row per approval granted (and its permit) that no intent carries yet and that was
 *   not recorded `not_executed`;
 * - `ledger_sent_permits`: every permit a `command.intent` carried, so a permit is never sent twice by any later
 *   engine on the store without reading the ledger (HOST-070).
 * Not append-only: projections of the entries, like `device_gates`. An older store gets them from its entries.
 */
import type { Db } from './db.js';
import { settlesCommand } from './gate-projection.js';
import type { LedgerAppend, LedgerEntry } from './ledger-types.js';

export const UNSETTLED_DDL = `CREATE TABLE ledger_unsettled (
  command_id TEXT PRIMARY KEY,
  seq BIGINT NOT NULL
);
CREATE INDEX ledger_unsettled_seq ON ledger_unsettled (seq);
CREATE TABLE ledger_open_approvals (
  approval_id TEXT PRIMARY KEY,
  permit_id TEXT,
  seq BIGINT NOT NULL
);
CREATE TABLE ledger_sent_permits (
  permit_id TEXT PRIMARY KEY,
  seq BIGINT NOT NULL
);`;

/** An unsettled intent: its command and the seq of its `command.intent`. */
export interface UnsettledRow {
  command_id: string;
  seq: number;
}

/** A granted approval no intent carries yet. */
export interface OpenApproval {
  approvalId: string;
  permitId: string | null;
}

/** The kinds whose entries change the side tables (the rest cost nothing on append). */
const KINDS = new Set([
  'command.intent',
  'command.not_sent',
  'error',
  'receipt',
  'reconcile',
  'approval',
  'permit.issue',
]);

/** Keeps the side tables in step with one sealed entry `e`, inside the writer's transaction `t`. */
export async function projectUnsettled(t: Db, e: LedgerAppend & { seq: number }): Promise<void> {
  if (!KINDS.has(e.kind)) return;
  const cmd = typeof e.command_id === 'string' ? e.command_id : null;
  const approval = typeof e.approval_id === 'string' ? e.approval_id : null;
  if (e.kind === 'command.intent') {
    if (cmd)
      await t.run('INSERT INTO ledger_unsettled (command_id, seq) VALUES (?, ?) ON CONFLICT (command_id) DO NOTHING', [
        cmd,
        e.seq,
      ]);
    if (approval) await t.run('DELETE FROM ledger_open_approvals WHERE approval_id = ?', [approval]);
    if (typeof e.permit_id === 'string')
      await t.run('INSERT INTO ledger_sent_permits (permit_id, seq) VALUES (?, ?) ON CONFLICT (permit_id) DO NOTHING', [
        e.permit_id,
        e.seq,
      ]);
    return;
  }
  if (cmd && settlesCommand(e)) {
    await t.run('DELETE FROM ledger_unsettled WHERE command_id = ?', [cmd]);
    return;
  }
  if (!approval) return;
  if (e.kind === 'approval' && e.event === 'decided' && e.decision === 'approve')
    await t.run(
      'INSERT INTO ledger_open_approvals (approval_id, permit_id, seq) VALUES (?, NULL, ?) ON CONFLICT (approval_id) DO NOTHING',
      [approval, e.seq],
    );
  else if (e.kind === 'permit.issue' && typeof e.permit_id === 'string')
    await t.run(
      `INSERT INTO ledger_open_approvals (approval_id, permit_id, seq) VALUES (?, ?, ?)
       ON CONFLICT (approval_id) DO UPDATE SET permit_id = excluded.permit_id`,
      [approval, e.permit_id, e.seq],
    );
  else if (e.kind === 'approval' && e.event === 'not_executed')
    await t.run('DELETE FROM ledger_open_approvals WHERE approval_id = ?', [approval]);
}

/** Every unsettled intent, oldest first (an indexed read of the side table: O(unsettled)). */
export async function unsettledRows(db: Db): Promise<UnsettledRow[]> {
  const rows = await db.all<{ command_id: string; seq: number | string }>(
    'SELECT command_id, seq FROM ledger_unsettled ORDER BY seq',
  );
  return rows.map((r) => ({ command_id: r.command_id, seq: Number(r.seq) }));
}

/** Every granted approval no intent carries yet, oldest first. */
export async function openApprovals(db: Db): Promise<OpenApproval[]> {
  const rows = await db.all<{ approval_id: string; permit_id: string | null }>(
    'SELECT approval_id, permit_id FROM ledger_open_approvals ORDER BY seq',
  );
  return rows.map((r) => ({ approvalId: r.approval_id, permitId: r.permit_id }));
}

/** True when a `command.intent` already carried `permitId` (an indexed read of one row; HOST-070). */
export async function permitSent(db: Db, permitId: string): Promise<boolean> {
  return (await db.all('SELECT 1 FROM ledger_sent_permits WHERE permit_id = ?', [permitId])).length > 0;
}

/** Builds the side tables from the entries of a store that predates them, page by page (inside the migration). */
export async function backfillUnsettled(t: Db): Promise<void> {
  const PAGE = 5_000;
  for (let from = -1; ;) {
    const rows = await t.all<{ seq: number | string; line: string }>(
      `SELECT seq, line FROM ledger_entries WHERE seq > ? AND kind IN (${[...KINDS].map(() => '?').join(', ')})
       ORDER BY seq LIMIT ?`,
      [from, ...KINDS, PAGE],
    );
    for (const r of rows) {
      const e = JSON.parse(r.line) as LedgerEntry;
      await projectUnsettled(t, e);
    }
    if (rows.length < PAGE) return;
    from = Number(rows[rows.length - 1]!.seq);
  }
}
