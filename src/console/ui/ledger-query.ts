// The ledger browser's filters as the operator API reads them (`GET /v1/operator/ledger`, docs/operator.md).
import { ApiError, api } from './api.js';
import type { LedgerEntry } from './types.js';

export const FILTERS = [
  ['kind', 'Kind', ''],
  ['endpoint_id', 'Endpoint', ''],
  ['device_id', 'Device', ''],
  ['command_id', 'Command', ''],
  ['run_id', 'Run', ''],
  ['since', 'Since', '2026-01-31T09:00:00Z'],
  ['until', 'Until', '2026-01-31T17:00:00Z'],
] as const;
export type FilterKey = (typeof FILTERS)[number][0];
export type Filters = Partial<Record<FilterKey, string>>;

export interface LedgerPage {
  entries: LedgerEntry[];
  next_before: number | null;
}

/** The API path of one page of matching entries before seq `before` (null: from the head). */
export function ledgerPath(f: Filters, before: number | null, limit = 50): string {
  const p = new URLSearchParams({ limit: String(limit) });
  for (const [k, v] of Object.entries(f)) if (v) p.set(k, v);
  // Paging and the filters use the scan (`before`); a kind alone pages the same way.
  p.set('before', String(before ?? Number.MAX_SAFE_INTEGER));
  return `/ledger?${p.toString()}`;
}

/** A refused filter in words: the code, then each schema error (`since: must match format "date-time"`). */
export function filterError(e: unknown): string {
  if (!(e instanceof ApiError)) return `Filter refused: ${(e as Error).message}`;
  const errors = (e.details as { errors?: Array<{ path?: string; message?: string }> } | undefined)?.errors ?? [];
  const what = errors.length
    ? errors.map((x) => `${(x.path ?? '').replace(/^\//, '') || 'query'}: ${x.message ?? ''}`).join('; ')
    : e.message;
  return `Filter refused (${e.code ?? e.status}): ${what}`;
}

/**
 * Every entry the filters match, oldest first, read page by page back from the head; `onProgress` gets the count
 * read so far after each page.
 */
export async function allMatching(f: Filters, onProgress: (n: number) => void): Promise<LedgerEntry[]> {
  const pages: LedgerEntry[][] = [];
  let before: number | null = null;
  let n = 0;
  for (;;) {
    const r: LedgerPage = await api<LedgerPage>('GET', ledgerPath(f, before, 500));
    pages.push(r.entries);
    n += r.entries.length;
    onProgress(n);
    if (r.next_before === null) break;
    before = r.next_before;
  }
  return pages.reverse().flat();
}
