import { jcs, linkOverText } from '../core/index.js';
import type { ChainCheck } from '../core/index.js';
import { ChainWalker } from './chain-walker.js';
import type { Db } from './db.js';
import type { LedgerEntry } from './ledger-types.js';

const PAGE = 5000;

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

type StoredRow = [seq: number, digest: string, prev_digest: string, line: string];

const PAGE_SQL = 'SELECT seq, digest, prev_digest, line FROM ledger_entries WHERE seq > ? ORDER BY seq LIMIT ?';

/**
 * Recomputes every stored link of `ledger_entries`, page by page, and checks each row's columns
 * (`seq`, `digest`, `prev_digest`) against its stored entry. A pruned ledger starts at its checkpoint.
 * Issue 21: rows are read as arrays and the next page is requested before this one is hashed (on PostgreSQL the
 * server reads it meanwhile); memory is two pages whatever the ledger's length.
 */
export async function verifyStored(db: Db): Promise<ChainCheck> {
  const walker = new ChainWalker(true);
  let head: string | null = null;
  // The seq and prev_digest the next row must have once a first entry was accepted (null before, or after a break).
  let nextSeq = -1;
  let nextPrev: string | null = null;
  const page = (after: number) => db.rows<StoredRow>(PAGE_SQL, [after, PAGE]);
  let pending: Promise<StoredRow[]> | null = page(-1);
  while (pending) {
    const rows: StoredRow[] = await pending;
    const last = rows[rows.length - 1];
    pending = rows.length === PAGE && last ? page(last[0]) : null;
    for (const r of rows) {
      const [seq, digest, prev, line] = r;
      // Issue 21: the link over the stored bytes and the row's columns, nothing parsed; the first entry, and any row
      // this does not accept, take the full path below (same verdict and reason as before).
      if (seq === nextSeq && prev === nextPrev && linkOverText(line, digest, prev) === digest) {
        walker.accept(seq, digest);
        nextSeq = seq + 1;
        nextPrev = head = digest;
        continue;
      }
      let e: Record<string, unknown> | null;
      try {
        e = JSON.parse(line) as Record<string, unknown>;
      } catch {
        e = null;
      }
      if (!e || e['seq'] !== seq || e['digest'] !== digest || e['prev_digest'] !== prev) {
        await pending?.catch(() => undefined);
        return { ok: false, broken_at: seq, reason: 'digest' };
      }
      const b = walker.push(e, line);
      head = digest;
      if (b) {
        await pending?.catch(() => undefined);
        return {
          ok: false,
          broken_at: b.seq ?? seq,
          reason: b.reason === 'checkpoint' ? 'genesis' : toCoreReason(b.reason),
        };
      }
      const x = walker.expects;
      nextSeq = x ? x.seq : -1;
      nextPrev = x ? x.prev : null;
    }
  }
  return { ok: true, count: walker.count, head_digest: head };
}
