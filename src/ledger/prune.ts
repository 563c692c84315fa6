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
  if (pruned > 0) await ledger.append({ kind: 'retention.prune', pruned, checkpoint });
  return { pruned, checkpoint };
}
