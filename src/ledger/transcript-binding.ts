import { H, jcs } from '../core/index.js';
import { scrubSecrets } from './redaction.js';

/**
 * How a transcript item is bound to the host ledger (issue 20): the `tool_call` ledger entry of a call carries
 * `transcript_digests: {call, result}`, the digests of the two transcript items exactly as they are stored. An
 * edited, dropped or inserted tool call or result then no longer matches a chained entry. Model messages
 * (`kind: "message"`) have no ledger entry and are not bound.
 */

/** Fields the store or the export add to an item after its digest is taken. */
const UNBOUND_FIELDS = ['seq', 'ts', 'ledger_seq'] as const;

/** The stored form of a transcript item: canonical JSON with credentials scrubbed (HOST-056). */
export function transcriptForm<T>(item: T): T {
  return scrubSecrets(JSON.parse(jcs(item))) as T;
}

/** The digest of a stored (or exported) transcript item, without its position, time and ledger seq. */
export function transcriptItemDigest(item: Record<string, unknown>): string {
  const copy: Record<string, unknown> = { ...item };
  for (const f of UNBOUND_FIELDS) delete copy[f];
  return H(copy);
}

/** The digest a `tool_call` entry records for an item about to be appended to the transcript. */
export function bindingDigest(item: Record<string, unknown>): string {
  return transcriptItemDigest(transcriptForm(item));
}
