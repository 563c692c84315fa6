import { brk } from './package-checks.js';
import { LEDGER_FILE, TRANSCRIPT_FILE } from './package-format.js';
import type { PackageBreak } from './package-format.js';
import { num, obj } from './host-facts.js';
import type { BundleView, HostFacts } from './host-facts.js';

export type { BundleView } from './host-facts.js';

/**
 * The package's cross-checks (issue 20 item 3), pure over the bundles, the transcript and what {@link HostFacts}
 * gathered from the host ledger as it streamed by (issue 21): each endpoint bundle is bound to the host
 * `evidence.export` entry that recorded it; endpoint receipts and host receipts are checked both ways; the
 * transcript's tool calls are bound to the `tool_call` entries. A re-sealed chain recomputes, but it no longer
 * agrees with the other chain or with the entries that recorded it.
 */

type Json = Record<string, unknown>;

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

/**
 * Binds every bundle to the host ledger: the last `evidence.export` of its endpoint must name its genesis, head
 * and length. Returns the binding entry's seq per endpoint (receipts recorded before it must be in the bundle).
 */
export function bindBundles(
  host: HostFacts,
  bundles: readonly BundleView[],
  problems: PackageBreak[],
  counts: CrossCheckCounts,
): Map<string, number> {
  const bound = new Map<string, number>();
  for (const b of bundles) {
    const x = host.exports.get(b.endpoint_id);
    if (!x && host.prunedBefore !== null) {
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

/**
 * Endpoint ↔ host receipts (issue 20): a host receipt recorded before its bundle was exported whose chain
 * position lies in the bundle must be there, and match it; every endpoint receipt must be a host receipt, or a
 * command the host recorded as unknown. A receipt in one and not the other is reported with both positions.
 */
export function crossCheckReceipts(
  host: HostFacts,
  bundles: readonly BundleView[],
  boundAt: ReadonlyMap<string, number>,
  problems: PackageBreak[],
  counts: CrossCheckCounts,
): void {
  counts.receipts_cross_checked += host.receiptsMatched;
  counts.receipts_not_in_bundle += host.receiptsNotInBundle;
  // Not in the bundle: a gap only when the receipt was recorded before the bundle and follows one of its entries.
  const found = [...host.receiptProblems];
  for (const c of host.gapCandidates) {
    const bound = boundAt.get(c.endpoint);
    if (bound !== undefined && c.seq < bound) {
      const bundle = bundles.find((b) => b.endpoint_id === c.endpoint) as BundleView;
      found.push(
        brk(
          LEDGER_FILE,
          c.seq,
          'receipt_missing_from_bundle',
          `host receipt (ledger.jsonl seq ${c.seq}) has endpoint seq ${c.evSeq} after entry ${c.follows} of ${bundle.path}, which does not hold it`,
        ),
      );
    } else counts.receipts_not_in_bundle++;
  }
  // One problem at most per host receipt: in ledger order.
  problems.push(...found.sort((a, b) => (a.seq ?? -1) - (b.seq ?? -1)));

  const pruned = host.prunedBefore !== null;
  for (const b of bundles) {
    // A pruned ledger lacks the host receipts of the bundle's older entries: check from the first it records on.
    const recorded = b.entries.filter((e) => host.hostDigests.has(String(e['digest']))).map((e) => num(e['seq']));
    const from = pruned ? (recorded.length ? Math.min(...recorded) : Infinity) : -Infinity;
    for (const e of b.entries) {
      if (e['kind'] !== 'receipt' || host.hostDigests.has(String(e['digest']))) continue;
      if (num(e['seq']) < from) {
        counts.pruned_unchecked++;
        continue;
      }
      const command = obj(e['body'])?.['command_id'];
      const state = typeof command === 'string' ? host.states.get(command) : undefined;
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
 * `tool_call` entry recorded, and every recorded digest of an exported session has its line. `host` was gathered
 * for these `items` and the session the package's transcript was limited to (or null for all).
 */
export function crossCheckTranscript(
  host: HostFacts,
  items: readonly Json[],
  problems: PackageBreak[],
  counts: CrossCheckCounts,
): void {
  const seenCalls = new Set<number>();
  const seenResults = new Set<number>();
  const start = host.prunedBefore;
  // Tool calls whose result was recorded before the checkpoint: their entries were pruned (HOST-056).
  const prunedCalls = new Set<string>();
  if (start !== null)
    for (const it of items)
      if (it['kind'] === 'tool_result' && num(it['ledger_seq']) < start)
        prunedCalls.add(`${String(it['session_id'])}\u0000${String(it['call_id'])}`);
  items.forEach((it, i) => {
    const kind = it['kind'];
    if (kind !== 'tool_call' && kind !== 'tool_result') {
      counts.transcript_messages++;
      return;
    }
    const digest = host.itemDigests[i] as string;
    const at = num(it['seq']);
    if (kind === 'tool_call') {
      const seq = (host.calls.get(digest) ?? []).find((s) => !seenCalls.has(s));
      if (seq !== undefined) {
        seenCalls.add(seq);
        counts.transcript_bound++;
        return;
      }
    } else {
      const seq = num(it['ledger_seq']);
      if (host.results.get(seq) === digest && !seenResults.has(seq)) {
        seenResults.add(seq);
        counts.transcript_bound++;
        return;
      }
    }
    const key = `${String(it['session_id'])}\u0000${String(it['call_id'])}`;
    if (prunedCalls.has(key)) {
      counts.pruned_unchecked++;
      return;
    }
    if (host.legacy.has(key)) {
      counts.transcript_unbound++;
      return;
    }
    problems.push(
      brk(TRANSCRIPT_FILE, at, 'transcript_unbound', `${String(kind)} line matches no tool_call entry of ledger.jsonl`),
    );
  });
  // Unmatched calls grouped by their digest in first-seen order, then unmatched results, in ledger order.
  const calls = [...host.strayCalls];
  for (const [digest, seqs] of host.calls)
    for (const seq of seqs) if (!seenCalls.has(seq)) calls.push({ order: host.callOrder.get(digest) ?? 0, seq });
  calls.sort((a, b) => a.order - b.order || a.seq - b.seq);
  for (const c of calls)
    problems.push(brk(LEDGER_FILE, c.seq, 'transcript_line_missing', 'its tool call is not in transcript.jsonl'));
  const results = [...host.strayResults, ...[...host.results.keys()].filter((s) => !seenResults.has(s))];
  for (const s of results.sort((a, b) => a - b))
    problems.push(brk(LEDGER_FILE, s, 'transcript_line_missing', 'its tool result is not in transcript.jsonl'));
}
