import { bodyOfReceipt } from './evidence-conformance.js';
import { brk } from './package-checks.js';
import { LEDGER_FILE } from './package-format.js';
import type { PackageBreak } from './package-format.js';
import { transcriptItemDigest } from './transcript-binding.js';

/**
 * What the package cross-checks (package-cross-check.ts) need from the host ledger, gathered entry by entry as
 * `ledger.jsonl` streams by (issue 21): its first and last entries, the last `evidence.export` of each endpoint,
 * the outcome of every host receipt against the bundles, the states of the commands the bundles name and the
 * `tool_call` entries the transcript names. The bundles and the transcript are known first, so what is kept is
 * bounded by them, by the endpoints and by the problems found, never by the ledger's length.
 */

type Json = Record<string, unknown>;

/** What the host ledger says happened to a command (HOST-091). */
export type CommandState = 'intent' | 'unknown' | 'settled_no_receipt' | 'receipt';

/** One endpoint bundle of the package, parsed. */
export interface BundleView {
  endpoint_id: string;
  path: string;
  genesis_digest: unknown;
  head_digest: unknown;
  entries: Json[];
}

/** A host receipt not in its bundle whose endpoint `prev_digest` is (decided once the bundle's binding is known). */
interface GapCandidate {
  seq: number;
  endpoint: string;
  evSeq: number;
  follows: number;
}

export const num = (v: unknown): number => (typeof v === 'number' ? v : -1);
export const obj = (v: unknown): Json | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;

const itemKey = (session: unknown, call: unknown): string => `${String(session)}\u0000${String(call)}`;

export class HostFacts {
  first: Json | undefined;
  last: Json | undefined;
  /** Entries whose seq was asked for (an anchor's). */
  readonly kept = new Map<number, Json>();
  /** The last `evidence.export` (source `endpoint`) of each endpoint. */
  readonly exports = new Map<string, Json>();

  /** Host `receipt` entries, and the endpoints they name that have no bundle. */
  receipts = 0;
  readonly receiptsWithoutBundle = new Set<string>();
  /** Receipt outcomes against the bundles, in host order. */
  receiptsMatched = 0;
  receiptsNotInBundle = 0;
  readonly receiptProblems: PackageBreak[] = [];
  readonly gapCandidates: GapCandidate[] = [];
  /** Evidence digests of host receipts that some bundle holds. */
  readonly hostDigests = new Set<string>();
  /** States of the commands whose receipts the bundles hold. */
  readonly states = new Map<string, CommandState>();

  /** `tool_call` entries by call digest (digests the transcript holds), in first-seen order. */
  readonly calls = new Map<string, number[]>();
  /** Tool-call entries whose call digest the transcript does not hold, with the order their digest was first seen. */
  readonly strayCalls: { order: number; seq: number }[] = [];
  readonly callOrder = new Map<string, number>();
  /** Result digest by `tool_call` entry seq, for the seqs the transcript's results name; the rest are stray. */
  readonly results = new Map<number, string>();
  readonly strayResults: number[] = [];
  /** Keys (`session\0call_id`) of the transcript's items recorded by entries without digests. */
  readonly legacy = new Set<string>();

  private readonly bundleByEndpoint = new Map<string, Map<string, Json>>();
  private readonly bundleDigests = new Set<string>();
  private readonly watched = new Set<string>();
  private readonly transcriptCalls = new Set<string>();
  private readonly transcriptResults = new Set<number>();
  private readonly transcriptKeys = new Set<string>();
  /** Transcript item digests, computed once. */
  readonly itemDigests: string[];

  constructor(
    bundles: readonly BundleView[],
    transcript: readonly Json[] | null,
    private readonly session: string | null,
    private readonly keep?: ReadonlySet<number>,
  ) {
    for (const b of bundles) {
      this.bundleByEndpoint.set(b.endpoint_id, new Map(b.entries.map((e) => [String(e['digest']), e])));
      for (const e of b.entries) {
        this.bundleDigests.add(String(e['digest']));
        const command = e['kind'] === 'receipt' ? obj(e['body'])?.['command_id'] : undefined;
        if (typeof command === 'string') this.watched.add(command);
      }
    }
    this.itemDigests = (transcript ?? []).map((it) =>
      it['kind'] === 'tool_call' || it['kind'] === 'tool_result' ? transcriptItemDigest(it) : '',
    );
    (transcript ?? []).forEach((it, i) => {
      if (it['kind'] === 'tool_call') this.transcriptCalls.add(this.itemDigests[i] as string);
      else if (it['kind'] === 'tool_result') this.transcriptResults.add(num(it['ledger_seq']));
      this.transcriptKeys.add(itemKey(it['session_id'], it['call_id']));
    });
  }

  /** The bundle entries of `endpoint` by digest. */
  bundle(endpoint: string): Map<string, Json> | undefined {
    return this.bundleByEndpoint.get(endpoint);
  }

  /** The seq a pruned ledger starts at (its checkpoint), or null when it is held from genesis. */
  get prunedBefore(): number | null {
    return this.first?.['kind'] === 'checkpoint' ? num(this.first['seq']) : null;
  }

  /** The first, kept and last entries, in order (what an anchor is checked against). */
  get ends(): Json[] {
    const out = [this.first, ...this.kept.values(), this.last].filter((e): e is Json => e !== undefined);
    return out.filter((e, i) => out.indexOf(e) === i);
  }

  /** Feeds the next host entry, in ledger order. */
  push(e: Json): void {
    this.first ??= e;
    this.last = e;
    const seq = e['seq'];
    if (typeof seq === 'number' && this.keep?.has(seq)) this.kept.set(seq, e);
    const kind = e['kind'];
    if (kind === 'evidence.export' && e['source'] === 'endpoint' && typeof e['endpoint_id'] === 'string')
      this.exports.set(e['endpoint_id'], e);
    if (kind === 'receipt') this.receipt(e);
    else if (kind === 'tool_call') this.toolCall(e);
    const command = e['command_id'];
    if (typeof command === 'string' && this.watched.has(command)) this.commandState(command, e);
  }

  /** Which commands the host left open as unknown (HOST-091) and which it settled without a receipt. */
  private commandState(id: string, e: Json): void {
    const kind = e['kind'];
    if (kind === 'command.intent' && !this.states.has(id)) this.states.set(id, 'intent');
    else if (kind === 'command.unknown' && this.states.get(id) === 'intent') this.states.set(id, 'unknown');
    else if (kind === 'command.not_sent' || (kind === 'reconcile' && e['outcome'] === 'not_executed'))
      this.states.set(id, 'settled_no_receipt');
    else if (kind === 'receipt') this.states.set(id, 'receipt');
  }

  /** A host receipt against its endpoint's bundle (issue 20): matched, differing, a possible gap, or not in it. */
  private receipt(r: Json): void {
    this.receipts++;
    const receipt = obj(r['receipt']);
    const ev = obj(receipt?.['evidence']);
    const endpoint = String(receipt?.['endpoint_id']);
    const id = receipt?.['endpoint_id'];
    if (typeof id === 'string' && !this.bundleByEndpoint.has(id)) this.receiptsWithoutBundle.add(id);
    const digest = ev?.['digest'];
    if (typeof digest === 'string' && this.bundleDigests.has(digest)) this.hostDigests.add(digest);
    const entries = this.bundleByEndpoint.get(endpoint);
    const hit = entries && typeof digest === 'string' ? entries.get(digest) : undefined;
    if (hit) {
      if (
        hit['seq'] !== ev?.['seq'] ||
        hit['prev_digest'] !== ev?.['prev_digest'] ||
        // A tampered entry may have lost its body: a mismatch, never a crash. A kept `replayed` is a deviation (§9).
        !bodyOfReceipt(hit['body'], receipt as Json)
      )
        this.receiptProblems.push(
          brk(LEDGER_FILE, num(r['seq']), 'cross_check', 'receipt differs from the endpoint evidence entry'),
        );
      else this.receiptsMatched++;
      return;
    }
    const follows = entries && typeof ev?.['prev_digest'] === 'string' ? entries.get(ev['prev_digest']) : undefined;
    if (follows)
      this.gapCandidates.push({ seq: num(r['seq']), endpoint, evSeq: num(ev?.['seq']), follows: num(follows['seq']) });
    else this.receiptsNotInBundle++;
  }

  /** A `tool_call` entry of the exported session, by the transcript digests it recorded. */
  private toolCall(e: Json): void {
    if (this.session !== null && e['agent_run_id'] !== this.session) return;
    const d = obj(e['transcript_digests']);
    if (!d) {
      const key = itemKey(e['agent_run_id'], e['call_id']);
      if (this.transcriptKeys.has(key)) this.legacy.add(key);
      return;
    }
    const seq = num(e['seq']);
    const call = String(d['call']);
    let order = this.callOrder.get(call);
    if (order === undefined) this.callOrder.set(call, (order = this.callOrder.size));
    const seqs = this.transcriptCalls.has(call) ? this.calls.get(call) : undefined;
    if (seqs) seqs.push(seq);
    else if (this.transcriptCalls.has(call)) this.calls.set(call, [seq]);
    else this.strayCalls.push({ order, seq });
    if (this.transcriptResults.has(seq)) this.results.set(seq, String(d['result']));
    else this.strayResults.push(seq);
  }
}
