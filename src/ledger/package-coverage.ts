import type { HostFacts } from './host-facts.js';
import type { CrossCheckCounts } from './package-cross-check.js';

/**
 * How much of a package's evidence its intact chains were checked against (issue 21): a package whose chains all
 * recompute but whose receipts could not be matched to an endpoint bundle is `partial`, never `verified`.
 */
export interface PackageCoverage {
  /** Host `receipt` entries in `ledger.jsonl`. */
  receipts: number;
  /** Host receipts matched to the endpoint evidence entry with the same digest. */
  receipts_cross_checked: number;
  /** Host receipts not matched: their endpoint's bundle is absent, of another chain epoch, or older than them. */
  receipts_unchecked: number;
  /** Endpoints with host receipts whose bundle the package does not hold. */
  endpoints_without_bundle: string[];
  /** Bundles, endpoint receipts and transcript lines whose recording entries were pruned (HOST-056). */
  pruned_unchecked: number;
  /** Tool-call transcript lines recorded before transcript binding, so bound to nothing. */
  transcript_unbound: number;
}

/** The coverage of a package whose chains are intact, from its host ledger's facts, bundles and cross-check counts. */
export function packageCoverage(host: HostFacts, counts: CrossCheckCounts): PackageCoverage {
  return {
    receipts: host.receipts,
    receipts_cross_checked: counts.receipts_cross_checked,
    receipts_unchecked: host.receipts - counts.receipts_cross_checked,
    endpoints_without_bundle: [...host.receiptsWithoutBundle].sort(),
    pruned_unchecked: counts.pruned_unchecked,
    transcript_unbound: counts.transcript_unbound,
  };
}

/** Whether everything the package holds was checked: otherwise it is `partial`. */
export function fullyCovered(c: PackageCoverage): boolean {
  return (
    c.receipts_unchecked === 0 &&
    c.endpoints_without_bundle.length === 0 &&
    c.pruned_unchecked === 0 &&
    c.transcript_unbound === 0
  );
}
