/** Shapes and names of the evidence export package (`shared/spec/export-package.md`). */

export const PACKAGE_FORMAT = 'mhs-host.evidence-package';
export const PACKAGE_SCHEMA_VERSION = 1;
export const MANIFEST_FILE = 'manifest.json';
export const LEDGER_FILE = 'ledger.jsonl';
export const TRANSCRIPT_FILE = 'transcript.jsonl';
export const README_FILE = 'README.txt';

/** What no export proves (HOST-055, MHS-004 EVID-022). */
export const NOT_PROVEN = [
  'that any endpoint was honest',
  'that any device was safe',
  'that any experiment succeeded',
  'that a package re-sealed from scratch is not one: compare its head with an anchor kept elsewhere (mhs-host ledger head)',
  'what the model was told in messages: only tool calls and results are bound to ledger entries',
] as const;

/** How a verification problem is named: always `MHS.EVIDENCE.CHAIN_BROKEN` (HOST-053), with file and seq. */
export interface PackageBreak {
  code: 'MHS.EVIDENCE.CHAIN_BROKEN';
  file: string;
  seq: number | null;
  reason: string;
  detail?: string;
}

/**
 * A conformance deviation of one endpoint found on an intact chain (issue 16): the chain recomputes as the
 * endpoint hashed it, but an entry's shape breaks a wire rule. Reported apart from breaks; it does not unverify.
 */
export interface PackageDeviation {
  code: 'MHS.EVIDENCE.NONCONFORMING';
  endpoint_id: string;
  file: string;
  seq: number;
  /** The wire contract rule the entry deviates from, e.g. `wire §9`. */
  rule: string;
  /** `receipt_body_replayed`: the receipt body keeps `replayed`. */
  reason: string;
  detail: string;
}

/** `manifest.json` of a package. */
export interface PackageManifest {
  format: typeof PACKAGE_FORMAT;
  schema_version: number;
  created_at: string;
  host: { name: string; version: string; conformance_target: string; self_test: boolean };
  ledger: {
    path: string;
    first_seq: number;
    genesis_digest: string;
    head_seq: number;
    head_digest: string;
    /** Present when the ledger was pruned: the checkpoint it starts with (HOST-056). */
    checkpoint?: { seq: number; digest: string; sealed_seq: number; sealed_digest: string };
  };
  endpoints: {
    endpoint_id: string;
    path: string;
    genesis_digest: string;
    head_digest: string;
    /** The host `evidence.export` entry that recorded this bundle (issue 20); absent when none does. */
    recorded_by?: { seq: number; digest: string };
  }[];
  /** The session `transcript.jsonl` was limited to, or null for every session. */
  transcript_session: string | null;
  manifests: string[];
  verification: {
    host_chain: 'ok' | 'broken';
    endpoint_chains: 'ok' | 'broken';
    /** Bundles bound to the ledger, receipts both ways, transcript to `tool_call` entries (issue 20). */
    cross_check: 'ok' | 'broken' | 'not_checked';
    status: 'verified' | 'unverified';
    break?: PackageBreak;
    /** Conformance deviations of endpoints whose chains are intact (issue 16); present only when there are some. */
    deviations?: PackageDeviation[];
  };
  not_proven: string[];
  files: { path: string; size: number; sha256: string }[];
  manifest_sha256: string;
}

/** `<slug>`: the endpoint id with every character outside `[A-Za-z0-9._-]` replaced by `_`. */
export function endpointSlug(endpointId: string): string {
  return endpointId.replace(/[^A-Za-z0-9._-]/g, '_');
}

/** Path of an endpoint's evidence inside the package. */
export function endpointEvidencePath(endpointId: string): string {
  return `endpoints/${endpointSlug(endpointId)}/evidence.jsonl`;
}

/** Path of a manifest inside the package. */
export function manifestPath(digest: string): string {
  return `manifests/${digest}.json`;
}

/** JSONL text of canonical lines (each line ends with `\n`). */
export function jsonlText(lines: readonly string[]): string {
  return lines.map((l) => `${l}\n`).join('');
}

/** The README every package carries: what it proves and what it does not (HOST-055). */
export function readmeText(m: { created_at: string; status: string; head_seq: number; endpoints: number }): string {
  return `mhs-host evidence package
created_at: ${m.created_at}
status: ${m.status}

What this package holds
- ledger.jsonl: the host ledger (hash chain, entries ${m.head_seq + 1 > 0 ? 'up to seq ' + m.head_seq : ''}).
- endpoints/<slug>/evidence.jsonl: the evidence chain of each of ${m.endpoints} endpoint(s), as exported by the endpoint.
- manifests/<digest>.json: the endpoint manifests, named by manifest_digest.
- transcript.jsonl: the session transcript (tool calls and results the model saw).
- manifest.json: every file's size and sha256, and manifest_sha256 over the manifest itself.

What verification proves
- Every file is the one listed (size and sha256) and no other file is present.
- Each chain recomputes link by link: digest = sha256(JCS(entry without digest) || prev_digest),
  from a genesis entry (prev_digest = 64 zeros) or, for a pruned ledger, from a checkpoint entry
  whose prev_digest is the digest of the last pruned entry. Entries before a checkpoint are not in
  the package and are not proven.
- Every manifest's digest matches its file name.
- Each endpoint bundle is the one an evidence.export entry of ledger.jsonl recorded (genesis, head, length).
- Endpoint and host receipts agree both ways: a host receipt recorded before its bundle that follows one
  of the bundle's entries is in the bundle, and every endpoint receipt is a host receipt (or a command the
  host recorded as unknown); a receipt in one and not the other is named with both positions.
- Every tool call and tool result in transcript.jsonl matches the digest its tool_call entry recorded,
  and no recorded one is missing.
- With an anchor (mhs-host ledger verify --anchor FILE [--public-key PEM]): the package holds the
  anchored entry, so a package re-sealed after the anchor was taken fails.

What is NOT proven
${NOT_PROVEN.map((s) => `- ${s}`).join('\n')}
Hash chains prove internal consistency and tamper evidence relative to their anchors, not truth
(MHS-004 EVID-022). Anyone holding the package can rebuild consistent chains from scratch; compare
the anchors (genesis and head digests) with copies kept elsewhere.

Verify: mhs-host ledger verify <this folder>   (or reimplement docs/ledger.md, "Offline verification")
`;
}
