import { jcs } from '../core/index.js';
import type { ChainCheck } from '../core/index.js';
import { ChainWalker } from './chain-walker.js';
import type { ChainBreak } from './chain-walker.js';
import type { Db } from './db.js';
import type { LedgerEntry } from './ledger-types.js';
import type { StoredRangeReader } from './stored-range-reader.js';
import { PAGE, ROWS_AFTER, ROWS_BETWEEN, acceptRows } from './stored-rows.js';
import type { RunState, StoredRow } from './stored-rows.js';
import type { RangeResult } from './verify-worker.js';

function lookupColumn(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

function toCoreReason(r: string): 'digest' | 'prev_digest' | 'seq' | 'genesis' {
  return r === 'prev_digest' || r === 'seq' || r === 'genesis' ? r : 'digest';
}

/** Inserts sealed entries (100 rows per statement); `texts[i]`, when given, is the JCS text of `rows[i]`. */
export async function insertEntries(t: Db, rows: readonly LedgerEntry[], texts: readonly string[] = []): Promise<void> {
  for (let i = 0; i < rows.length; i += 100) {
    const chunk = rows.slice(i, i + 100);
    const params: unknown[] = [];
    for (const [k, e] of chunk.entries()) {
      params.push(
        e.seq,
        e.prev_digest,
        e.digest,
        e.ts,
        e.kind,
        lookupColumn(e['command_id']),
        lookupColumn(e['session_id']),
        lookupColumn(e['endpoint_id']),
        texts[i + k] ?? jcs(e),
      );
    }
    await t.run(
      `INSERT INTO ledger_entries (seq, prev_digest, digest, ts, kind, command_id, session_id, endpoint_id, line) VALUES ${chunk
        .map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?)')
        .join(', ')}`,
      params,
    );
  }
}

/** Ledgers at least this long (in seqs) are split between the verifier and its reader thread. */
const SPLIT_MIN = 2 * PAGE;

/**
 * Recomputes every stored link of `ledger_entries`, page by page, and checks each row's columns
 * (`seq`, `digest`, `prev_digest`) against its stored entry. A pruned ledger starts at its checkpoint.
 * Issue 21: rows are read as arrays, the next page is requested before this one is hashed (on PostgreSQL the
 * server reads it meanwhile), and with a `reader` (SQLite) the upper half of a long ledger is checked on the reader
 * thread while this walks the lower half; memory is a few pages whatever the ledger's length. Whatever the reader
 * thread does not accept, or does not follow on from the lower half, is read and judged here.
 */
export async function verifyStored(db: Db, reader?: StoredRangeReader): Promise<ChainCheck> {
  const walker = new ChainWalker(true);
  let head: string | null = null;
  // The seq and prev_digest the next row must have once a first entry was accepted.
  const at: RunState = { seq: -1, prev: null };
  let upper: Promise<RangeResult | null> | null = null;
  let through = Infinity;
  if (reader) {
    const [lo, hi] =
      (await db.rows<[number | null, number | null]>('SELECT MIN(seq), MAX(seq) FROM ledger_entries'))[0] ?? [];
    if (typeof lo === 'number' && typeof hi === 'number' && hi - lo >= SPLIT_MIN) {
      through = lo + Math.floor((hi - lo) / 2);
      upper = reader.check(through, hi);
    }
  }
  const page = (after: number): Promise<StoredRow[]> =>
    through === Infinity
      ? db.rows<StoredRow>(ROWS_AFTER, [after, PAGE])
      : db.rows<StoredRow>(ROWS_BETWEEN, [after, through, PAGE]);
  let after = -1;
  for (;;) {
    let pending: Promise<StoredRow[]> | null = page(after);
    while (pending) {
      const rows: StoredRow[] = await pending;
      const last = rows[rows.length - 1];
      pending = rows.length === PAGE && last ? page(last[0]) : null;
      if (last) after = last[0];
      for (let i = 0; i < rows.length; i++) {
        // The stored-bytes fast path over as many rows as it accepts; the first entry, and any row it does not
        // accept, take the full path below (same verdict and reason as before).
        const j = acceptRows(rows, i, at);
        if (j > i) {
          const run = rows[j - 1] as StoredRow;
          walker.acceptRun(j - i, run[0], run[1]);
          head = run[1];
          i = j;
        }
        const r = rows[i];
        if (!r) break;
        const [seq, digest, prev, line] = r;
        let e: Record<string, unknown> | null;
        try {
          e = JSON.parse(line) as Record<string, unknown>;
        } catch {
          e = null;
        }
        const b: ChainBreak | null =
          !e || e['seq'] !== seq || e['digest'] !== digest || e['prev_digest'] !== prev
            ? { seq, index: -1, reason: 'digest' }
            : walker.push(e, line);
        head = digest;
        if (b) {
          await pending?.catch(() => undefined);
          await upper;
          return {
            ok: false,
            broken_at: b.seq ?? seq,
            reason: b.reason === 'checkpoint' ? 'genesis' : toCoreReason(b.reason),
          };
        }
        const x = walker.expects;
        at.seq = x ? x.seq : -1;
        at.prev = x ? x.prev : null;
      }
    }
    if (!upper) break;
    const r = await upper;
    upper = null;
    through = Infinity;
    // The reader thread's run counts only when its first row follows on from this walk.
    if (r?.first && r.last && r.first.seq === at.seq && r.first.prev === at.prev) {
      walker.acceptRun(r.accepted, r.last.seq, r.last.digest);
      at.seq = r.last.seq + 1;
      at.prev = head = r.last.digest;
      after = r.last.seq;
    }
  }
  return { ok: true, count: walker.count, head_digest: head };
}
