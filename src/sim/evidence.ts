/**
 * The endpoint's own evidence chain (wire contract §9), linked with the §1 formula from src/core.
 * A fault flag can corrupt one link on purpose so hosts can prove they detect it.
 */
import { GENESIS_PREV_DIGEST, isoAt, seal, verifyChain, type ChainEntry, type Clock } from '../core/index.js';
import type { EvidenceBundle, EvidenceEntry, EvidenceLink } from '../mhs/wire-types.js';

/** Entry kinds of §9. */
export type EvidenceKind =
  | 'genesis'
  | 'session.open'
  | 'session.heartbeat'
  | 'session.close'
  | 'session.expired'
  | 'receipt'
  | 'permit.issue'
  | 'permit.revoke'
  | 'permit.consume'
  | 'estop'
  | 'reset';

/** Append-only, hash-chained evidence of one endpoint. */
export class EvidenceLog {
  private readonly entries: EvidenceEntry[] = [];

  /**
   * @param corruptSeq when set, the entry with this seq is stored with a body that no longer
   *   matches its digest (fault injection `--corrupt-evidence`).
   */
  constructor(
    private readonly endpointId: string,
    private readonly clock: Clock,
    private readonly corruptSeq?: number,
  ) {
    this.append('genesis', { endpoint_id: endpointId });
  }

  /** Appends an entry and returns it (sealed). */
  append(kind: EvidenceKind, value: Record<string, unknown>): EvidenceEntry {
    // A JSON copy: later mutation of live objects must not change a sealed entry.
    const body = JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
    const last = this.entries[this.entries.length - 1];
    const entry = seal({
      seq: this.entries.length,
      prev_digest: last ? last.digest : GENESIS_PREV_DIGEST,
      ts: isoAt(this.clock.now()),
      kind,
      body,
    }) as EvidenceEntry;
    const stored = entry.seq === this.corruptSeq ? { ...entry, body: { ...body, _tampered: true } } : entry;
    this.entries.push(stored);
    return entry;
  }

  /** The `{seq, prev_digest, digest}` of an entry, as receipts carry it (§6). */
  static link(e: EvidenceEntry): EvidenceLink {
    return { seq: e.seq, prev_digest: e.prev_digest, digest: e.digest };
  }

  /** `mhs__evidence {action:"export"}`. */
  export(): EvidenceBundle {
    const genesis = this.entries[0] as EvidenceEntry;
    const head = this.entries[this.entries.length - 1] as EvidenceEntry;
    return {
      endpoint_id: this.endpointId,
      genesis_digest: genesis.digest,
      head_digest: head.digest,
      entries: this.entries.map((e) => structuredClone(e)),
    };
  }

  /** `mhs__evidence {action:"verify"}`: recomputes every link. */
  verify(): { ok: true } | { ok: false; broken_at: number } {
    const check = verifyChain(this.entries as unknown as ChainEntry[]);
    return check.ok ? { ok: true } : { ok: false, broken_at: check.broken_at };
  }

  get size(): number {
    return this.entries.length;
  }
}
