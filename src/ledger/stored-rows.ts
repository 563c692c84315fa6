// chain.js alone, not the core index: the reader thread (verify-worker.ts) starts without the rest of core.
import { linkOverText } from '../core/chain.js';

/**
 * The stored-bytes fast path of ledger verification (issue 21), shared by the verifier and its reader thread
 * (verify-worker.ts): a row is accepted, without parsing its line, when it follows the row before it (its `seq` and
 * `prev_digest` columns) and the link over its stored line (chain.ts `linkOverText`) equals its `digest` column. A
 * row this does not accept is not judged here: the verifier takes it through the full path.
 */

/** A `ledger_entries` row as read for verification. */
export type StoredRow = [seq: number, digest: string, prev_digest: string, line: string];

/** Rows after a seq, in order, at most a limit. */
export const ROWS_AFTER =
  'SELECT seq, digest, prev_digest, line FROM ledger_entries WHERE seq > ? ORDER BY seq LIMIT ?';
/** Rows after a seq up to another, in order, at most a limit. */
export const ROWS_BETWEEN =
  'SELECT seq, digest, prev_digest, line FROM ledger_entries WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?';

/** Rows per page. */
export const PAGE = 5000;

/** Where a run of accepted rows stands: the seq and prev_digest the next row must have. */
export interface RunState {
  seq: number;
  prev: string | null;
}

/** Accepts `rows` from index `from` while each follows `at` and its stored link holds; returns the first index not accepted. */
export function acceptRows(rows: readonly StoredRow[], from: number, at: RunState): number {
  let i = from;
  for (; i < rows.length; i++) {
    const [seq, digest, prev, line] = rows[i] as StoredRow;
    if (seq !== at.seq || prev !== at.prev || linkOverText(line, digest, prev) !== digest) break;
    at.seq = seq + 1;
    at.prev = digest;
  }
  return i;
}
