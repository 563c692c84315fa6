import { ErrorCode, H, HostError, isoAt, jcs } from '../core/index.js';
import type { Clock } from '../core/index.js';
import type { EvidenceBundle } from '../mhs/wire-types.js';
import type { Db } from './db.js';
import { ensureLedgerSchema } from './ledger-schema.js';
import { transcriptForm } from './transcript-binding.js';

/** One item of the session transcript: what the model saw (tool calls and their results). */
export interface TranscriptItem {
  /** e.g. `tool_call`, `tool_result`, `message`. */
  kind: string;
  session_id?: string;
  [field: string]: unknown;
}

/** A stored transcript item with its position and time. */
export type StoredTranscriptItem = TranscriptItem & { seq: number; ts: string };

/**
 * The export's other inputs, kept in the same store (append-only tables): endpoint manifests by
 * digest, endpoint evidence bundles as `mhs__evidence {action:"export"}` returned them (wire §9),
 * and the session transcript (HOST-054).
 */
export interface Artifacts {
  /**
   * Stores a manifest under its `manifest_digest` after checking it equals
   * `H(manifest without manifest_digest)` (wire §3); returns the digest. Storing it again is a no-op.
   * Fails with `MHS.HOST.MANIFEST_INVALID` when the digest does not recompute.
   */
  putManifest(manifest: Record<string, unknown>): Promise<string>;
  getManifest(digest: string): Promise<Record<string, unknown> | undefined>;
  listManifests(): Promise<{ digest: string; endpoint_id: string }[]>;
  /**
   * Stores an endpoint evidence bundle verbatim (the export uses each endpoint's latest); in transaction `t` when
   * given (the transaction of the `evidence.export` entry that records it, so neither is stored without the other).
   */
  putEvidenceBundle(bundle: EvidenceBundle | Record<string, unknown>, t?: Db): Promise<void>;
  /** The most recently stored bundle of every endpoint, by endpoint id. */
  latestEvidenceBundles(): Promise<EvidenceBundle[]>;
  /** Appends one transcript item (credentials scrubbed, HOST-056); returns its seq. */
  appendTranscript(item: TranscriptItem): Promise<number>;
  /** The transcript in order, optionally of one session. */
  transcript(opts?: { sessionId?: string }): Promise<StoredTranscriptItem[]>;
}

/** Fails with `MHS.HOST.MANIFEST_INVALID` unless `manifest_digest` recomputes; returns it. */
export function checkManifestDigest(manifest: Record<string, unknown>): string {
  const { manifest_digest: claimed, ...rest } = manifest;
  const digest = H(rest);
  if (claimed !== digest) {
    throw new HostError(ErrorCode.HOST_MANIFEST_INVALID, 'manifest_digest does not match the manifest', {
      claimed,
      computed: digest,
    });
  }
  return digest;
}

class SqlArtifacts implements Artifacts {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  async putManifest(manifest: Record<string, unknown>): Promise<string> {
    const digest = checkManifestDigest(manifest);
    const endpoint = typeof manifest['endpoint_id'] === 'string' ? manifest['endpoint_id'] : '';
    await this.db.tx(async (t) => {
      if (await t.get('SELECT 1 AS x FROM ledger_manifests WHERE digest = ?', [digest])) return;
      await t.run('INSERT INTO ledger_manifests (digest, endpoint_id, stored_at, body) VALUES (?, ?, ?, ?)', [
        digest,
        endpoint,
        isoAt(this.clock.now()),
        jcs(manifest),
      ]);
    });
    return digest;
  }

  async getManifest(digest: string): Promise<Record<string, unknown> | undefined> {
    const row = await this.db.get<{ body: string }>('SELECT body FROM ledger_manifests WHERE digest = ?', [digest]);
    return row ? (JSON.parse(row.body) as Record<string, unknown>) : undefined;
  }

  listManifests(): Promise<{ digest: string; endpoint_id: string }[]> {
    return this.db.all('SELECT digest, endpoint_id FROM ledger_manifests ORDER BY digest');
  }

  async putEvidenceBundle(bundle: EvidenceBundle | Record<string, unknown>, t?: Db): Promise<void> {
    const b = bundle as Partial<EvidenceBundle>;
    if (typeof b.endpoint_id !== 'string' || !Array.isArray(b.entries)) {
      throw new HostError(ErrorCode.HOST_INTERNAL, 'not an evidence bundle (endpoint_id, entries)', {});
    }
    await (t ?? this.db).run(
      'INSERT INTO ledger_evidence_bundles (endpoint_id, head_digest, entry_count, stored_at, body) VALUES (?, ?, ?, ?, ?)',
      [b.endpoint_id, b.head_digest ?? null, b.entries.length, isoAt(this.clock.now()), jcs(bundle)],
    );
  }

  async latestEvidenceBundles(): Promise<EvidenceBundle[]> {
    const rows = await this.db.all<{ body: string }>(
      `SELECT b.body FROM ledger_evidence_bundles b
       WHERE b.id = (SELECT MAX(c.id) FROM ledger_evidence_bundles c WHERE c.endpoint_id = b.endpoint_id)
       ORDER BY b.endpoint_id`,
    );
    return rows.map((r) => JSON.parse(r.body) as EvidenceBundle);
  }

  async appendTranscript(item: TranscriptItem): Promise<number> {
    if (!item || typeof item.kind !== 'string')
      throw new HostError(ErrorCode.HOST_INTERNAL, 'transcript item needs a kind', {});
    const clean = transcriptForm(item);
    const ts = isoAt(this.clock.now());
    const session = typeof clean.session_id === 'string' ? clean.session_id : null;
    if (this.db.dialect === 'postgres') {
      const row = await this.db.get<{ seq: number }>(
        'INSERT INTO ledger_transcript (session_id, ts, line) VALUES (?, ?, ?) RETURNING seq',
        [session, ts, jcs(clean)],
      );
      return (row as { seq: number }).seq;
    }
    return this.db.tx(async (t) => {
      await t.run('INSERT INTO ledger_transcript (session_id, ts, line) VALUES (?, ?, ?)', [session, ts, jcs(clean)]);
      const row = await t.get<{ seq: number }>('SELECT last_insert_rowid() AS seq');
      return (row as { seq: number }).seq;
    });
  }

  async transcript(opts: { sessionId?: string } = {}): Promise<StoredTranscriptItem[]> {
    const rows = opts.sessionId
      ? await this.db.all<{ seq: number; ts: string; line: string }>(
          'SELECT seq, ts, line FROM ledger_transcript WHERE session_id = ? ORDER BY seq',
          [opts.sessionId],
        )
      : await this.db.all<{ seq: number; ts: string; line: string }>(
          'SELECT seq, ts, line FROM ledger_transcript ORDER BY seq',
        );
    return rows.map((r) => ({ ...(JSON.parse(r.line) as TranscriptItem), seq: r.seq, ts: r.ts }));
  }
}

/** Opens the artifact store on `db` (creating its append-only tables when missing). */
export async function openArtifacts(db: Db, opts: { clock: Clock }): Promise<Artifacts> {
  await ensureLedgerSchema(db);
  return new SqlArtifacts(db, opts.clock);
}
