/**
 * Versioned workflow definitions (issue 20 item 1): every definition registered is kept with its digest (SHA-256 of
 * its RFC 8785 form); registering a different definition under an id makes a new version, the same one again makes
 * none (start-up upserts of the fixtures stay idempotent, also for several processes on one PostgreSQL store).
 * `openwop_workflows` keeps pointing at the current version; a run keeps the definition it started with in its own
 * row, so a replacement never changes a run already started.
 */
import { ErrorCode, H, HostError, isoAt } from '../core/index.js';
import type { Clock } from '../core/index.js';
import { migrate } from '../ledger/index.js';
import type { Db } from '../ledger/index.js';
import type { WorkflowDefinition } from './types.js';

const DDL = `CREATE TABLE IF NOT EXISTS openwop_workflow_versions (
  workflow_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  digest TEXT NOT NULL,
  definition TEXT NOT NULL,
  source TEXT NOT NULL,
  principal TEXT,
  registered_at TEXT NOT NULL,
  PRIMARY KEY (workflow_id, seq)
)`;

/** Creates the version table once per store. */
export function ensureWorkflowVersions(db: Db): Promise<boolean> {
  return migrate(db, 'openwop.workflow_versions.v1', () => DDL);
}

/** One stored version of a definition. */
export interface WorkflowVersion {
  workflowId: string;
  /** 1 for the first definition registered under the id, then one more per replacement. */
  seq: number;
  /** `sha256` of the definition's RFC 8785 form. */
  digest: string;
  /** The version this one replaced (null for the first). */
  replacedDigest: string | null;
  /** False when the current version already had this digest: nothing was written. */
  created: boolean;
  source: string;
  principal: string | null;
}

/** Digest of a definition as the version table and `RunSnapshot.workflowDigest` give it. */
export function workflowDigest(def: WorkflowDefinition): string {
  return H(def);
}

/**
 * Inside the caller's transaction `t`: stores `def` as a new version of its id unless the current one has its digest,
 * and makes it current. A concurrent registration that took the same sequence first with another definition raises
 * `conflict` (retry); with the same definition it counts as already registered.
 */
export async function putWorkflowVersion(
  t: Db,
  clock: Clock,
  def: WorkflowDefinition,
  source: string,
  principal: string | null,
): Promise<WorkflowVersion> {
  const digest = workflowDigest(def);
  const cur = await t.get<{ seq: number | string; digest: string }>(
    'SELECT seq, digest FROM openwop_workflow_versions WHERE workflow_id = ? ORDER BY seq DESC LIMIT 1',
    [def.id],
  );
  const base = { workflowId: def.id, digest, source, principal };
  if (cur?.digest === digest) return { ...base, seq: Number(cur.seq), replacedDigest: null, created: false };
  const seq = Number(cur?.seq ?? 0) + 1;
  const now = isoAt(clock.now());
  const put = await t.run(
    `INSERT INTO openwop_workflow_versions (workflow_id, seq, digest, definition, source, principal, registered_at)
     VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    [def.id, seq, digest, JSON.stringify(def), source, principal, now],
  );
  if (put.changes === 0) {
    const won = await t.get<{ digest: string }>(
      'SELECT digest FROM openwop_workflow_versions WHERE workflow_id = ? AND seq = ?',
      [def.id, seq],
    );
    if (won?.digest === digest) return { ...base, seq, replacedDigest: null, created: false };
    throw new HostError(ErrorCode.CONFLICT, `workflow ${def.id} was replaced concurrently; register again`, {
      workflowId: def.id,
    });
  }
  await t.run(
    `INSERT INTO openwop_workflows (workflow_id, version, definition, source, registered_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (workflow_id) DO UPDATE SET version = excluded.version, definition = excluded.definition,
       source = excluded.source, registered_at = excluded.registered_at`,
    [def.id, def.version, JSON.stringify(def), source, now],
  );
  return { ...base, seq, replacedDigest: cur?.digest ?? null, created: true };
}

/** Every stored version of `workflowId`, oldest first. */
export async function listWorkflowVersions(
  db: Db,
  workflowId: string,
): Promise<Array<{ seq: number; digest: string; source: string; principal: string | null; registeredAt: string }>> {
  const rows = await db.all<{
    seq: number | string;
    digest: string;
    source: string;
    principal: string | null;
    registered_at: string;
  }>(
    'SELECT seq, digest, source, principal, registered_at FROM openwop_workflow_versions WHERE workflow_id = ? ORDER BY seq',
    [workflowId],
  );
  return rows.map((r) => ({
    seq: Number(r.seq),
    digest: r.digest,
    source: r.source,
    principal: r.principal ?? null,
    registeredAt: r.registered_at,
  }));
}
