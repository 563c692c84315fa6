import type { Ledger, LedgerEntry } from '../ledger/ledger-types.js';

/** Filters of `GET /v1/operator/ledger` (issue 18 item 4). */
export interface LedgerQuery {
  from?: number;
  /** Only entries with a lower seq (paging back); default past the head. */
  before?: number;
  limit?: number;
  kind?: string;
  command_id?: string;
  endpoint_id?: string;
  device_id?: string;
}

/** How many entries one read of the scan takes. */
const CHUNK = 500;

function matches(e: LedgerEntry, q: LedgerQuery): boolean {
  const x = e as Record<string, unknown>;
  return (
    (!q.kind || e.kind === q.kind) &&
    (!q.command_id || x.command_id === q.command_id) &&
    (!q.endpoint_id || x.endpoint_id === q.endpoint_id) &&
    (!q.device_id || x.device_id === q.device_id)
  );
}

/**
 * Scans the ledger back from `before` (default: past `headSeq`) for up to `limit` entries matching every given
 * filter. Returns them oldest first, with `next_before`: the seq to pass as `before` for the older page, or null
 * when the scan reached the start of the ledger.
 */
export async function browseLedger(
  ledger: Pick<Ledger, 'range'>,
  headSeq: number,
  q: LedgerQuery & { limit: number },
): Promise<{ entries: LedgerEntry[]; next_before: number | null }> {
  const found: LedgerEntry[] = [];
  let end = Math.min(headSeq, (q.before ?? headSeq + 1) - 1);
  while (end >= 0 && found.length < q.limit) {
    const start = Math.max(0, end - CHUNK + 1);
    const chunk = await ledger.range(start, end);
    for (let i = chunk.length - 1; i >= 0 && found.length < q.limit; i--) {
      const e = chunk[i]!;
      if (matches(e, q)) found.push(e);
      end = e.seq - 1;
    }
    if (start === 0 && found.length < q.limit) end = -1;
    else if (chunk.length === 0) end = start - 1;
  }
  return { entries: found.reverse(), next_before: end >= 0 ? end + 1 : null };
}
