// Guarantees (issue 21 item 7): what the package cross-checks keep from a streamed host ledger (HostFacts) is bounded
// by the bundles, the transcript, the endpoints and the problems found, never by the ledger's length: thousands of
// commands, receipts of an endpoint without a bundle and tool calls of another session leave nothing behind per
// entry, while the entries the bundle and transcript do name are all kept and still cross-checked.
import { describe, expect, it } from 'vitest';
import { HostFacts } from '../../src/ledger/host-facts.js';
import type { BundleView } from '../../src/ledger/host-facts.js';
import type { PackageBreak } from '../../src/ledger/package-format.js';
import { crossCheckReceipts, bindBundles, emptyCounts } from '../../src/ledger/package-cross-check.js';
import { ENDPOINT, sampleEndpointChain } from './helpers.js';

type Json = Record<string, unknown>;

const OTHER = 'mhs://elsewhere:7400';

function* hostLedger(n: number): Generator<Json> {
  let seq = 0;
  yield { seq: seq++, kind: 'genesis' };
  for (let i = 0; i < n; i++) {
    const command_id = `cmd_other_${i}`;
    yield { seq: seq++, kind: 'command.intent', command_id, endpoint_id: OTHER };
    yield {
      seq: seq++,
      kind: 'receipt',
      command_id,
      receipt: { endpoint_id: OTHER, evidence: { seq: i, digest: `d${i}`, prev_digest: `d${i - 1}` } },
    };
    yield { seq: seq++, kind: 'tool_call', agent_run_id: 'ses_other', call_id: `c${i}`, transcript_digests: {} };
  }
}

function view(b: { endpoint_id: string; genesis_digest: string; head_digest: string; entries: Json[] }): BundleView {
  return { ...b, path: 'endpoints/x/evidence.jsonl' };
}

describe('HostFacts', () => {
  it('keeps nothing per entry for commands, receipts and tool calls the bundle and transcript do not name', () => {
    const bundle = view(sampleEndpointChain(3).bundle);
    const facts = new HostFacts([bundle], [], 'ses_exported');
    const n = 5_000;
    for (const e of hostLedger(n)) facts.push(e);
    expect(facts.receipts).toBe(n);
    expect([...facts.receiptsWithoutBundle]).toEqual([OTHER]);
    expect(facts.receiptsNotInBundle).toBe(n);
    expect(facts.states.size).toBe(0);
    expect(facts.hostDigests.size).toBe(0);
    expect(facts.gapCandidates).toEqual([]);
    expect(facts.receiptProblems).toEqual([]);
    expect(facts.calls.size + facts.strayCalls.length + facts.results.size + facts.strayResults.length).toBe(0);
    expect(facts.callOrder.size).toBe(0);
    expect(facts.kept.size).toBe(0);
    expect(facts.ends.map((e) => e['seq'])).toEqual([0, 3 * n]);
  });

  it('keeps the entries the bundle names: its receipts are cross-checked, its commands tracked', () => {
    const chain = sampleEndpointChain(3);
    const bundle = view(chain.bundle);
    const facts = new HostFacts([bundle], null, null);
    let seq = 0;
    for (const e of hostLedger(1_000)) facts.push({ ...e, seq: seq++ });
    for (const receipt of chain.receipts) {
      const command_id = receipt['command_id'] as string;
      facts.push({ seq: seq++, kind: 'command.intent', command_id });
      facts.push({ seq: seq++, kind: 'receipt', command_id, receipt });
    }
    facts.push({
      seq: seq++,
      kind: 'evidence.export',
      source: 'endpoint',
      endpoint_id: ENDPOINT,
      genesis_digest: chain.bundle.genesis_digest,
      head_digest: chain.bundle.head_digest,
      entries: chain.bundle.entries.length,
    });
    const receipts = chain.receipts;
    expect(facts.states.size).toBe(receipts.length);
    expect(facts.hostDigests.size).toBe(receipts.length);
    const problems: PackageBreak[] = [];
    const counts = emptyCounts();
    const boundAt = bindBundles(facts, [bundle], problems, counts);
    crossCheckReceipts(facts, [bundle], boundAt, problems, counts);
    expect(problems).toEqual([]);
    expect(counts.receipts_cross_checked).toBe(receipts.length);
  });
});
