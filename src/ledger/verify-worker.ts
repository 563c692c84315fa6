/**
 * The reader thread of ledger verification (issue 21): checks one seq range of a SQLite ledger file over its own
 * read-only connection with the stored-bytes fast path (stored-rows.ts) while the verifier walks the range before
 * it, so reading and hashing run on two cores. Started by {@link StoredRangeReader} (stored-range-reader.ts).
 */
import { parentPort } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { PAGE, ROWS_BETWEEN, acceptRows } from './stored-rows.js';
import type { RunState, StoredRow } from './stored-rows.js';

/** A range to check: rows with `after < seq <= through` of the ledger file `file`. */
export interface RangeRequest {
  id: number;
  file: string;
  after: number;
  through: number;
}

/**
 * How far the range verifies on its own: from its first row (taken as given: the verifier checks that it follows
 * the row before the range), `accepted` rows in a row are accepted, the last of them `last`. Rows after that (a row
 * the fast path does not accept, or one beyond a gap) are for the verifier to judge.
 */
export interface RangeResult {
  id: number;
  first: { seq: number; prev: string } | null;
  last: { seq: number; digest: string } | null;
  accepted: number;
  /** Set when the range could not be read; nothing else is then. */
  error?: string;
}

/** Checks a range (see {@link RangeResult}). */
export function checkRange(req: RangeRequest): RangeResult {
  const out: RangeResult = { id: req.id, first: null, last: null, accepted: 0 };
  let conn: Database.Database | null = null;
  try {
    conn = new Database(req.file, { readonly: true, fileMustExist: true });
    const stmt = conn.prepare(ROWS_BETWEEN).raw(true);
    const at: RunState = { seq: -1, prev: null };
    let after = req.after;
    for (;;) {
      const rows = stmt.all(after, req.through, PAGE) as StoredRow[];
      const head = rows[0];
      if (!head) break;
      if (!out.first) {
        out.first = { seq: head[0], prev: head[2] };
        at.seq = head[0];
        at.prev = head[2];
      }
      const n = acceptRows(rows, 0, at);
      out.accepted += n;
      const last = rows[n - 1];
      if (last) out.last = { seq: last[0], digest: last[1] };
      if (n < rows.length || rows.length < PAGE) break;
      after = (rows[rows.length - 1] as StoredRow)[0];
    }
    return out;
  } catch (err) {
    return {
      id: req.id,
      first: null,
      last: null,
      accepted: 0,
      error: err instanceof Error ? err.message : String(err),
    };
  } finally {
    conn?.close();
  }
}

parentPort?.on('message', (req: RangeRequest) => parentPort?.postMessage(checkRange(req)));
