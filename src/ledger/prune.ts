import { ErrorCode, HostError } from '../core/index.js';
import type { Clock } from '../core/index.js';
import { withDeleteAllowed } from './append-only.js';
import type { Db } from './db.js';
import { ledgerUnavailable } from './ledger-health.js';
import type { DurableLedger, LedgerEntry } from './ledger-types.js';

/** What {@link pruneLedger} removed. */
export interface PruneResult {
  /** Entries deleted. */
  pruned: number;
  /** The checkpoint the ledger now starts with. */
  checkpoint: { seq: number; digest: string; sealed: { seq: number; digest: string } };
}

/**
 * Retention (HOST-056): deletes every entry before the latest `checkpoint` whose seq is at most
 * `beforeSeq`, so the ledger then starts with that checkpoint (its `prev_digest` is the digest of
 * the last pruned entry) and still verifies. The deletion goes through the one documented
 * maintenance path ({@link withDeleteAllowed}); the prune itself is then recorded as a
 * `retention.prune` entry. Pass `retention` (at least the endpoints' `receipt_retention_s`) to
 * refuse pruning behind a checkpoint younger than `minAgeMs`.
 * Fails with `MHS.HOST.CONFIG_INVALID` when there is no such checkpoint (append one first with
 * `ledger.checkpoint()` / `mhs-host ledger checkpoint`), and with `MHS.HOST.LEDGER_UNAVAILABLE`
 * when the store cannot be written.
 */
export async function pruneLedger(
  db: Db,
  ledger: DurableLedger,
  beforeSeq: number,
  retention?: { clock: Clock; minAgeMs: number },
  /** Fields added to the `retention.prune` entry (e.g. the policy a scheduled prune applied). */
  record: Record<string, unknown> = {},
): Promise<PruneResult> {
  const row = await db.get<{ line: string }>(
    `SELECT line FROM ledger_entries WHERE kind = 'checkpoint' AND seq <= ? ORDER BY seq DESC LIMIT 1`,
    [beforeSeq],
  );
  if (!row) {
    throw new HostError(
      ErrorCode.HOST_CONFIG_INVALID,
      'no checkpoint at or before that seq to prune up to',
      { before_seq: beforeSeq },
      {
        remediation: 'Append a checkpoint first (mhs-host ledger checkpoint), then prune before its seq.',
      },
    );
  }
  const cp = JSON.parse(row.line) as LedgerEntry & { sealed: { seq: number; digest: string } };
  // Everything pruned precedes the checkpoint: refuse while the checkpoint is younger than the retention.
  if (retention && Date.parse(cp.ts) > retention.clock.now() - retention.minAgeMs) {
    throw new HostError(
      ErrorCode.HOST_CONFIG_INVALID,
      'entries before that checkpoint are still inside the retention period',
      { checkpoint_seq: cp.seq, checkpoint_ts: cp.ts, min_age_ms: retention.minAgeMs },
      { remediation: 'Prune before an older checkpoint, or wait until the retention period has passed.' },
    );
  }
  let pruned: number;
  try {
    pruned = await withDeleteAllowed(db, 'ledger_entries', async (t) => {
      if (t.dialect === 'postgres') {
        await t.get(`SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.ledger_entries'))`);
      }
      return (await t.run('DELETE FROM ledger_entries WHERE seq < ?', [cp.seq])).changes;
    });
  } catch (err) {
    throw ledgerUnavailable(err, db.location);
  }
  const checkpoint = { seq: cp.seq, digest: cp.digest, sealed: cp.sealed };
  if (pruned > 0) await ledger.append({ ...record, kind: 'retention.prune', pruned, checkpoint });
  return { pruned, checkpoint };
}

/**
 * The newest checkpoint a retention policy lets the ledger be pruned up to (HOST-056): at or before `beforeSeq`,
 * written at or before `ledgerCutoff` (ISO time), and with no `receipt` younger than `receiptCutoff` before it.
 * Undefined when there is none (or only the first entry kept already).
 */
export async function retentionCheckpoint(
  db: Db,
  o: { beforeSeq: number; ledgerCutoff: string; receiptCutoff: string },
): Promise<{ seq: number; ts: string } | undefined> {
  try {
    // Receipts still inside their retention: the prefix must end before the first of them.
    const young = await db.get<{ seq: number | string | null }>(
      `SELECT MIN(seq) AS seq FROM ledger_entries WHERE kind = 'receipt' AND ts > ?`,
      [o.receiptCutoff],
    );
    const bound = young?.seq == null ? o.beforeSeq : Math.min(o.beforeSeq, Number(young.seq));
    const first = await db.get<{ seq: number | string }>('SELECT MIN(seq) AS seq FROM ledger_entries');
    const row = await db.get<{ seq: number | string; ts: string }>(
      `SELECT seq, ts FROM ledger_entries WHERE kind = 'checkpoint' AND seq <= ? AND ts <= ? ORDER BY seq DESC LIMIT 1`,
      [bound, o.ledgerCutoff],
    );
    if (!row || Number(row.seq) <= Number(first?.seq ?? 0)) return undefined;
    return { seq: Number(row.seq), ts: row.ts };
  } catch (err) {
    throw ledgerUnavailable(err, db.location);
  }
}

/** Whether anything but retention bookkeeping was appended since the last checkpoint (then a new one is worth it). */
export async function needsCheckpoint(db: Db): Promise<boolean> {
  try {
    const last = await db.get<{ seq: number | string | null }>(
      `SELECT MAX(seq) AS seq FROM ledger_entries WHERE kind = 'checkpoint'`,
    );
    const fresh = await db.get<{ seq: number | string }>(
      `SELECT seq FROM ledger_entries WHERE seq > ? AND kind NOT IN ('checkpoint', 'retention.prune') LIMIT 1`,
      [last?.seq == null ? -1 : Number(last.seq)],
    );
    return fresh !== undefined;
  } catch (err) {
    throw ledgerUnavailable(err, db.location);
  }
}

/**
 * The checkpoint a prune left first when no `retention.prune` records that prune (the process died between the
 * deletion and its entry); undefined when the ledger starts with genesis or the prune is recorded.
 */
export async function unrecordedPrune(
  db: Db,
  ledger: DurableLedger,
): Promise<{ seq: number; digest: string; sealed: { seq: number; digest: string } } | undefined> {
  const first = (await ledger.first()) as LedgerEntry & { sealed?: { seq: number; digest: string } };
  if (first.kind !== 'checkpoint' || !first.sealed) return undefined;
  let rows: Array<{ line: string }>;
  try {
    rows = await db.all<{ line: string }>(
      `SELECT line FROM ledger_entries WHERE kind = 'retention.prune' AND seq > ? ORDER BY seq`,
      [first.seq],
    );
  } catch (err) {
    throw ledgerUnavailable(err, db.location);
  }
  const recorded = rows.some(
    (r) => (JSON.parse(r.line) as { checkpoint?: { seq?: number } }).checkpoint?.seq === first.seq,
  );
  return recorded ? undefined : { seq: first.seq, digest: first.digest, sealed: first.sealed };
}
