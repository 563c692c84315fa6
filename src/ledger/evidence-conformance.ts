import { jcs } from '../core/index.js';
import type { PackageDeviation } from './package-format.js';

/**
 * The wire §9 receipt-body rule as the verifier applies it (issue 16). The chain is always recomputed over the
 * body as the endpoint hashed it; a body that keeps `replayed` then names a conformance deviation of that
 * endpoint, never a broken chain. A body that keeps `evidence`, or is no object, is a break.
 */
export type ReceiptBodyShape = 'conforming' | 'keeps_replayed' | 'invalid';

/** Classifies an endpoint evidence entry's receipt body against wire §9. */
export function receiptBodyShape(body: unknown): ReceiptBodyShape {
  if (!body || typeof body !== 'object' || Array.isArray(body) || 'evidence' in body) return 'invalid';
  return 'replayed' in body ? 'keeps_replayed' : 'conforming';
}

/** The deviation record of an entry whose receipt body keeps `replayed` (wire §9). */
export function replayedDeviation(endpointId: string, file: string, seq: number): PackageDeviation {
  return {
    code: 'MHS.EVIDENCE.NONCONFORMING',
    endpoint_id: endpointId,
    file,
    seq,
    rule: 'wire §9',
    reason: 'receipt_body_replayed',
    detail: 'intact chain, conformance deviation (wire §9: body includes replayed)',
  };
}

/**
 * Whether an endpoint entry's body is the body of `receipt` (the host's verbatim copy, HOST-052): the receipt
 * minus `evidence` and `replayed` (wire §9), or, for an endpoint that keeps it, minus `evidence` only.
 */
export function bodyOfReceipt(body: unknown, receipt: Record<string, unknown>): boolean {
  const shape = receiptBodyShape(body);
  if (shape === 'invalid') return false;
  const { evidence: _e, replayed: _r, ...conforming } = receipt;
  const expected = shape === 'keeps_replayed' ? { ...conforming, replayed: receipt['replayed'] } : conforming;
  return jcs(body) === jcs(expected);
}
