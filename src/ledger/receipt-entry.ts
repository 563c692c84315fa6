import type { Receipt } from '../mhs/wire-types.js';
import type { LedgerAppend } from './ledger-types.js';

/** Extra fields of a receipt entry: when it arrived, plus any lookup/trace fields (`traceparent`, `run_id`, …). */
export type ReceiptEntryExtra = { received_at: string } & Record<string, unknown>;

/**
 * A `receipt` ledger entry (HOST-050, 052): the receipt verbatim inside the wrapper
 * `{source:"mhs", receipt, received_at}`, the endpoint's evidence digest recorded as it came
 * (`endpoint_evidence`), and the lookup fields lifted from the receipt. The entry's own `digest`
 * (set by the ledger) is over the wrapper. Secrets are never scrubbed inside `receipt`.
 */
export function receiptEntry(receipt: Receipt | Record<string, unknown>, extra: ReceiptEntryExtra): LedgerAppend {
  const r = receipt as Partial<Receipt>;
  const lift: Record<string, unknown> = {};
  for (const k of ['command_id', 'session_id', 'endpoint_id', 'device_id', 'capability_id', 'status'] as const) {
    if (typeof r[k] === 'string') lift[k] = r[k];
  }
  return {
    ...extra,
    ...lift,
    kind: 'receipt',
    source: 'mhs',
    receipt,
    received_at: extra.received_at,
    endpoint_evidence: r.evidence ?? null,
  };
}
