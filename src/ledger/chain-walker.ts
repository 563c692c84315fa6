import { GENESIS_PREV_DIGEST, chainLink, linkOverText, storedChainLink } from '../core/index.js';

/** Why a link does not hold. */
export type BreakReason = 'digest' | 'prev_digest' | 'seq' | 'genesis' | 'checkpoint' | 'malformed';

/** The first entry at which a chain stops verifying. */
export interface ChainBreak {
  seq: number | null;
  /** 0-based position of the entry in its file or range. */
  index: number;
  reason: BreakReason;
}

const HEX64 = /^[0-9a-f]{64}$/;

/**
 * Walks a chain entry by entry (wire contract §1). The first entry must be a genesis (`seq` 0,
 * `prev_digest` of 64 zeros) or, when `allowCheckpoint`, a `checkpoint` whose `prev_digest`
 * equals its `sealed.digest` and whose `seq` is `sealed.seq + 1` (a pruned ledger, HOST-056).
 */
export class ChainWalker {
  private prev: string | null = null;
  private nextSeq: number | null = null;
  private index = 0;
  private broken: ChainBreak | null = null;
  first: Record<string, unknown> | null = null;
  last: Record<string, unknown> | null = null;

  constructor(private readonly allowCheckpoint: boolean) {}

  /**
   * Feeds the next entry; returns the break once one is found (and on every later call). With `line`, the stored
   * canonical text of `e`, the link is computed over those bytes (issue 21: no re-canonicalising); `canonical`: the
   * caller already checked that `line` is `JCS(e)`.
   */
  push(e: unknown, line?: string, canonical = false): ChainBreak | null {
    if (this.broken) return this.broken;
    const i = this.index++;
    if (!e || typeof e !== 'object' || Array.isArray(e))
      return (this.broken = { seq: null, index: i, reason: 'malformed' });
    const entry = e as Record<string, unknown>;
    const seq =
      typeof entry['seq'] === 'number' && Number.isSafeInteger(entry['seq']) ? (entry['seq'] as number) : null;
    const prev = entry['prev_digest'];
    const digest = entry['digest'];
    if (seq === null || typeof prev !== 'string' || typeof digest !== 'string') {
      return (this.broken = { seq, index: i, reason: 'malformed' });
    }
    // A digest that is not 64 hex digits is malformed whatever else fails; tested only once something does (issue 21:
    // a digest equal to its recomputed link is hex already), so every reason is as if it were tested first.
    if (this.nextSeq === null) {
      const why = this.startProblem(entry, seq, prev);
      if (why) return this.fail(seq, i, digest, why);
      if (!HEX64.test(digest)) return this.fail(seq, i, digest, 'malformed');
      this.first = entry;
    } else {
      if (seq !== this.nextSeq) return this.fail(seq, i, digest, 'seq');
      if (prev !== this.prev) return this.fail(seq, i, digest, 'prev_digest');
    }
    let link: string;
    try {
      const stored =
        line === undefined
          ? null
          : canonical && typeof entry['digest'] === 'string' && typeof entry['prev_digest'] === 'string'
            ? linkOverText(line, entry['digest'], entry['prev_digest'])
            : storedChainLink(entry, line);
      link = stored ?? chainLink(entry);
    } catch {
      return this.fail(seq, i, digest, 'malformed');
    }
    if (link !== digest) return this.fail(seq, i, digest, 'digest');
    this.prev = digest;
    this.nextSeq = seq + 1;
    this.last = entry;
    return null;
  }

  private fail(seq: number, index: number, digest: string, reason: BreakReason): ChainBreak {
    return (this.broken = { seq, index, reason: HEX64.test(digest) ? reason : 'malformed' });
  }

  private startProblem(e: Record<string, unknown>, seq: number, prev: string): BreakReason | null {
    if (e['kind'] === 'genesis') return seq === 0 && prev === GENESIS_PREV_DIGEST ? null : 'genesis';
    if (this.allowCheckpoint && e['kind'] === 'checkpoint') {
      const sealed = e['sealed'] as { seq?: unknown; digest?: unknown } | undefined;
      const ok = !!sealed && sealed.digest === prev && sealed.seq === seq - 1 && HEX64.test(prev);
      return ok ? null : 'checkpoint';
    }
    return 'genesis';
  }

  /** The seq and prev_digest the next entry must have, once a first entry was accepted (and no break). */
  get expects(): { seq: number; prev: string } | null {
    return this.broken || this.nextSeq === null || this.prev === null ? null : { seq: this.nextSeq, prev: this.prev };
  }

  /**
   * Accepts the next entry (seq and prev as {@link expects} said) whose link the caller recomputed to equal `digest`
   * over its stored bytes (ledger-rows.ts). `last` stays the last entry given to {@link push}.
   */
  accept(seq: number, digest: string): void {
    this.index++;
    this.prev = digest;
    this.nextSeq = seq + 1;
  }

  /** {@link accept} for `n` entries in a row, the last of them `seq` with `digest` (checked by the caller). */
  acceptRun(n: number, seq: number, digest: string): void {
    this.index += n;
    this.prev = digest;
    this.nextSeq = seq + 1;
  }

  /** The break found so far, or null. */
  get failure(): ChainBreak | null {
    return this.broken;
  }

  /** Entries accepted so far. */
  get count(): number {
    return this.broken ? this.broken.index : this.index;
  }
}
