import { ErrorCode, HostError } from '../core/index.js';
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
  /** Only entries that carry this run (`run_id`: intents, receipts and approvals a run's node caused). */
  run_id?: string;
  /** RFC 3339 date-time (validated by the route's schema): only entries with `ts` at or after it. */
  since?: string;
  /** RFC 3339 date-time: only entries with `ts` before it. */
  until?: string;
}

/** The filters that need the scan of {@link browseLedger} rather than one seq range. */
export const SCAN_FILTERS = ['command_id', 'endpoint_id', 'device_id', 'run_id', 'since', 'until'] as const;

/** How many entries one read of the scan takes. */
const CHUNK = 500;

/** A query with its time window as epoch ms (`since` inclusive, `until` exclusive). */
interface Compiled extends LedgerQuery {
  sinceMs?: number;
  untilMs?: number;
}

/**
 * The time window of `q` as epoch ms. The route's schema has already checked both are RFC 3339 date-times with a
 * zone; raises `validation_error` (`details.errors[0].path` `/until`) when `until` is not after `since`.
 */
export function timeWindow(q: Pick<LedgerQuery, 'since' | 'until'>): { sinceMs?: number; untilMs?: number } {
  const sinceMs = q.since === undefined ? undefined : Date.parse(q.since);
  const untilMs = q.until === undefined ? undefined : Date.parse(q.until);
  for (const [path, v] of [
    ['/since', sinceMs],
    ['/until', untilMs],
  ] as const) {
    if (v !== undefined && !Number.isFinite(v))
      throw new HostError(ErrorCode.VALIDATION_ERROR, `${path.slice(1)} is not a date-time`, {
        errors: [{ path, message: 'must match format "date-time"' }],
      });
  }
  if (sinceMs !== undefined && untilMs !== undefined && untilMs <= sinceMs) {
    throw new HostError(ErrorCode.VALIDATION_ERROR, 'the time window is empty: until must be after since', {
      errors: [{ path: '/until', message: 'must be after since' }],
    });
  }
  return { ...(sinceMs !== undefined ? { sinceMs } : {}), ...(untilMs !== undefined ? { untilMs } : {}) };
}

function matches(e: LedgerEntry, q: Compiled): boolean {
  const x = e as Record<string, unknown>;
  if (q.sinceMs !== undefined || q.untilMs !== undefined) {
    const t = Date.parse(e.ts);
    if (q.sinceMs !== undefined && !(t >= q.sinceMs)) return false;
    if (q.untilMs !== undefined && !(t < q.untilMs)) return false;
  }
  return (
    (!q.kind || e.kind === q.kind) &&
    (!q.command_id || x.command_id === q.command_id) &&
    (!q.endpoint_id || x.endpoint_id === q.endpoint_id) &&
    (!q.device_id || x.device_id === q.device_id) &&
    (!q.run_id || x.run_id === q.run_id)
  );
}

/**
 * Scans the ledger back from `before` (default: past `headSeq`) for up to `limit` entries matching every given
 * filter. Returns them oldest first, with `next_before`: the seq to pass as `before` for the older page, or null
 * when the scan reached the start of the ledger. Raises `validation_error` for an empty time window
 * ({@link timeWindow}).
 */
export async function browseLedger(
  ledger: Pick<Ledger, 'range'>,
  headSeq: number,
  query: LedgerQuery & { limit: number },
): Promise<{ entries: LedgerEntry[]; next_before: number | null }> {
  const q: Compiled & { limit: number } = { ...query, ...timeWindow(query) };
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
