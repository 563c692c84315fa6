import { bodyOfReceipt } from './evidence-conformance.js';
import { brk } from './package-checks.js';
import { LEDGER_FILE, TRANSCRIPT_FILE } from './package-format.js';
import type { PackageBreak } from './package-format.js';
import { transcriptItemDigest } from './transcript-binding.js';

/**
 * The package's cross-checks (issue 20 item 3), pure over parsed entries: each endpoint bundle is bound to the
 * host `evidence.export` entry that recorded it; endpoint receipts and host receipts are checked both ways; the
 * transcript's tool calls are bound to the `tool_call` entries. A re-sealed chain recomputes, but it no longer
 * agrees with the other chain or with the entries that recorded it.
 */

type Json = Record<string, unknown>;

/** One endpoint bundle of the package, parsed. */
export interface BundleView {
  endpoint_id: string;
  path: string;
  genesis_digest: unknown;
  head_digest: unknown;
  entries: Json[];
}

/** What the cross-checks counted; problems are separate. */
export interface CrossCheckCounts {
  receipts_cross_checked: number;
  /** Host receipts of another chain epoch of the endpoint, or newer than its exported bundle. */
  receipts_not_in_bundle: number;
  /** Endpoint receipts of commands the host recorded as `command.unknown` and has not reconciled. */
  receipts_unreconciled: number;
  transcript_bound: number;
  /** Tool calls recorded before transcript binding existed (their `tool_call` entry has no digests). */
  transcript_unbound: number;
  /** Model messages: not bound to any ledger entry (stated in `not_proven`). */
  transcript_messages: number;
  /** Bundles, endpoint receipts and transcript lines whose recording entries were pruned (HOST-056). */
  pruned_unchecked: number;
}

export function emptyCounts(): CrossCheckCounts {
  return {
    receipts_cross_checked: 0,
    receipts_not_in_bundle: 0,
    receipts_unreconciled: 0,
    transcript_bound: 0,
    transcript_unbound: 0,
    transcript_messages: 0,
    pruned_unchecked: 0,
  };
}

const num = (v: unknown): number => (typeof v === 'number' ? v : -1);
const obj = (v: unknown): Json | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;

/** The host seq of the last `evidence.export` entry that recorded each endpoint's bundle. */
function lastExports(host: readonly Json[]): Map<string, Json> {
  const out = new Map<string, Json>();
  for (const e of host)
    if (e['kind'] === 'evidence.export' && e['source'] === 'endpoint' && typeof e['endpoint_id'] === 'string')
      out.set(e['endpoint_id'], e);
  return out;
}

/** The seq a pruned ledger starts at (its checkpoint), or null when the package holds it from genesis. */
export function prunedBefore(host: readonly Json[]): number | null {
  const first = host[0];
  return first?.['kind'] === 'checkpoint' ? num(first['seq']) : null;
}

/**
 * Binds every bundle to the host ledger: the last `evidence.export` of its endpoint must name its genesis, head
 * and length. Returns the binding entry's seq per endpoint (receipts recorded before it must be in the bundle).
 */
export function bindBundles(
  host: readonly Json[],
  bundles: readonly BundleView[],
  problems: PackageBreak[],
  counts: CrossCheckCounts,
): Map<string, number> {
  const exports = lastExports(host);
  const bound = new Map<string, number>();
  for (const b of bundles) {
    const x = exports.get(b.endpoint_id);
    if (!x && prunedBefore(host) !== null) {
      counts.pruned_unchecked++;
      continue;
    }
    if (!x) {
      problems.push(
        brk(b.path, null, 'bundle_unbound', 'no evidence.export entry in ledger.jsonl records this bundle'),
      );
      continue;
    }
    // The gap check needs when the bundle was recorded, whether or not it is the recorded one.
    bound.set(b.endpoint_id, num(x['seq']));
    if (
      x['genesis_digest'] !== b.genesis_digest ||
      x['head_digest'] !== b.head_digest ||
      x['entries'] !== b.entries.length
    ) {
      problems.push(
        brk(
          b.path,
          null,
          'bundle_unbound',
          `ledger.jsonl seq ${num(x['seq'])} recorded this endpoint's bundle with head ${String(x['head_digest'])} and ${String(x['entries'])} entries`,
        ),
      );
    }
  }
  return bound;
}

/** Which commands the host left open as unknown (HOST-091) and which it settled without a receipt. */
function commandStates(host: readonly Json[]): Map<string, 'intent' | 'unknown' | 'settled_no_receipt' | 'receipt'> {
  const out = new Map<string, 'intent' | 'unknown' | 'settled_no_receipt' | 'receipt'>();
  for (const e of host) {
    const id = e['command_id'];
    if (typeof id !== 'string') continue;
    const kind = e['kind'];
    if (kind === 'command.intent' && !out.has(id)) out.set(id, 'intent');
    else if (kind === 'command.unknown' && out.get(id) === 'intent') out.set(id, 'unknown');
    else if (kind === 'command.not_sent' || (kind === 'reconcile' && e['outcome'] === 'not_executed'))
      out.set(id, 'settled_no_receipt');
    else if (kind === 'receipt') out.set(id, 'receipt');
  }
  return out;
}

/**
 * Endpoint ↔ host receipts (issue 20): a host receipt recorded before its bundle was exported whose chain
 * position lies in the bundle must be there, and match it; every endpoint receipt must be a host receipt, or a
 * command the host recorded as unknown. A receipt in one and not the other is reported with both positions.
 */
export function crossCheckReceipts(
  host: readonly Json[],
  bundles: readonly BundleView[],
  boundAt: ReadonlyMap<string, number>,
  problems: PackageBreak[],
  counts: CrossCheckCounts,
): void {
  const byDigest = new Map<string, Map<string, Json>>();
  for (const b of bundles) byDigest.set(b.endpoint_id, new Map(b.entries.map((e) => [String(e['digest']), e])));
  const hostDigests = new Set<string>();

  for (const r of host) {
    if (r['kind'] !== 'receipt') continue;
    const receipt = obj(r['receipt']);
    const ev = obj(receipt?.['evidence']);
    const endpoint = String(receipt?.['endpoint_id']);
    if (typeof ev?.['digest'] === 'string') hostDigests.add(ev['digest']);
    const entries = byDigest.get(endpoint);
    const hit = entries && typeof ev?.['digest'] === 'string' ? entries.get(ev['digest']) : undefined;
    if (hit) {
      if (
        hit['seq'] !== ev?.['seq'] ||
        hit['prev_digest'] !== ev?.['prev_digest'] ||
        // A tampered entry may have lost its body: a mismatch, never a crash. A kept `replayed` is a deviation (§9).
        !bodyOfReceipt(hit['body'], receipt as Json)
      )
        problems.push(
          brk(LEDGER_FILE, num(r['seq']), 'cross_check', 'receipt differs from the endpoint evidence entry'),
        );
      else counts.receipts_cross_checked++;
      continue;
    }
    // Not in the bundle: a gap only when the receipt was recorded before the bundle and follows one of its entries.
    const bound = boundAt.get(endpoint);
    const follows = entries && typeof ev?.['prev_digest'] === 'string' ? entries.get(ev['prev_digest']) : undefined;
    if (bound !== undefined && num(r['seq']) < bound && follows) {
      const bundle = bundles.find((b) => b.endpoint_id === endpoint) as BundleView;
      problems.push(
        brk(
          LEDGER_FILE,
          num(r['seq']),
          'receipt_missing_from_bundle',
          `host receipt (ledger.jsonl seq ${num(r['seq'])}) has endpoint seq ${num(ev?.['seq'])} after entry ${num(follows['seq'])} of ${bundle.path}, which does not hold it`,
        ),
      );
    } else counts.receipts_not_in_bundle++;
  }

  const states = commandStates(host);
  const pruned = prunedBefore(host) !== null;
  for (const b of bundles) {
    // A pruned ledger lacks the host receipts of the bundle's older entries: check from the first it records on.
    const recorded = b.entries.filter((e) => hostDigests.has(String(e['digest']))).map((e) => num(e['seq']));
    const from = pruned ? (recorded.length ? Math.min(...recorded) : Infinity) : -Infinity;
    for (const e of b.entries) {
      if (e['kind'] !== 'receipt' || hostDigests.has(String(e['digest']))) continue;
      if (num(e['seq']) < from) {
        counts.pruned_unchecked++;
        continue;
      }
      const command = obj(e['body'])?.['command_id'];
      const state = typeof command === 'string' ? states.get(command) : undefined;
      if (state === 'unknown') {
        counts.receipts_unreconciled++;
        continue;
      }
      const why =
        state === undefined
          ? 'the host ledger has no intent for this command'
          : state === 'settled_no_receipt'
            ? 'the host ledger settled this command as not executed'
            : 'the host ledger has no receipt with this digest';
      problems.push(
        brk(b.path, num(e['seq']), 'receipt_not_in_ledger', `endpoint receipt of command ${String(command)}: ${why}`),
      );
    }
  }
}

/**
 * Transcript ↔ `tool_call` entries (issue 20): every tool call and result line matches a digest a chained
 * `tool_call` entry recorded, and every recorded digest of an exported session has its line. `sessions` is the
 * session the package's transcript was limited to, or null for all.
 */
export function crossCheckTranscript(
  host: readonly Json[],
  items: readonly Json[],
  session: string | null,
  problems: PackageBreak[],
  counts: CrossCheckCounts,
): void {
  const calls = new Map<string, number[]>(); // call digest → tool_call entry seqs (a model may reuse call ids)
  const results = new Map<number, string>(); // tool_call entry seq → result digest
  const legacy = new Set<string>(); // `${session}\u0000${call_id}` of entries recorded without digests
  for (const e of host) {
    if (e['kind'] !== 'tool_call') continue;
    if (session !== null && e['agent_run_id'] !== session) continue;
    const d = obj(e['transcript_digests']);
    if (!d) {
      legacy.add(`${String(e['agent_run_id'])}\u0000${String(e['call_id'])}`);
      continue;
    }
    const seq = num(e['seq']);
    calls.set(String(d['call']), [...(calls.get(String(d['call'])) ?? []), seq]);
    results.set(seq, String(d['result']));
  }
  const seenCalls = new Set<number>();
  const seenResults = new Set<number>();
  const start = prunedBefore(host);
  // Tool calls whose result was recorded before the checkpoint: their entries were pruned (HOST-056).
  const prunedCalls = new Set<string>();
  if (start !== null)
    for (const it of items)
      if (it['kind'] === 'tool_result' && num(it['ledger_seq']) < start)
        prunedCalls.add(`${String(it['session_id'])}\u0000${String(it['call_id'])}`);
  for (const it of items) {
    const kind = it['kind'];
    if (kind !== 'tool_call' && kind !== 'tool_result') {
      counts.transcript_messages++;
      continue;
    }
    const digest = transcriptItemDigest(it);
    const at = num(it['seq']);
    if (kind === 'tool_call') {
      const seq = (calls.get(digest) ?? []).find((s) => !seenCalls.has(s));
      if (seq !== undefined) {
        seenCalls.add(seq);
        counts.transcript_bound++;
        continue;
      }
    } else {
      const seq = num(it['ledger_seq']);
      if (results.get(seq) === digest && !seenResults.has(seq)) {
        seenResults.add(seq);
        counts.transcript_bound++;
        continue;
      }
    }
    const key = `${String(it['session_id'])}\u0000${String(it['call_id'])}`;
    if (prunedCalls.has(key)) {
      counts.pruned_unchecked++;
      continue;
    }
    if (legacy.has(key)) {
      counts.transcript_unbound++;
      continue;
    }
    problems.push(
      brk(TRANSCRIPT_FILE, at, 'transcript_unbound', `${String(kind)} line matches no tool_call entry of ledger.jsonl`),
    );
  }
  for (const seqs of calls.values())
    for (const s of seqs)
      if (!seenCalls.has(s))
        problems.push(brk(LEDGER_FILE, s, 'transcript_line_missing', 'its tool call is not in transcript.jsonl'));
  for (const s of results.keys())
    if (!seenResults.has(s))
      problems.push(brk(LEDGER_FILE, s, 'transcript_line_missing', 'its tool result is not in transcript.jsonl'));
}
