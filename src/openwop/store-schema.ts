import { appendOnlyDdl, migrate } from '../ledger/index.js';
import type { Db } from '../ledger/index.js';
import { ensureRunEffects } from './effects/effect-records.js';
import { ensureRunLeases } from './run-leases.js';
import { ensureRunRequests } from './run-requests.js';
import { ensureWorkflowVersions } from './workflow-versions.js';

/** DDL of the OpenWOP tables; `last_seq` on the run row is the per-run sequence counter (issue 7 §3). */
const TABLES = `
CREATE TABLE IF NOT EXISTS openwop_workflows (
  workflow_id TEXT PRIMARY KEY,
  version TEXT NOT NULL,
  definition TEXT NOT NULL,
  source TEXT NOT NULL,
  registered_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS openwop_runs (
  run_id TEXT PRIMARY KEY,
  workflow_id TEXT NOT NULL,
  workflow_version TEXT NOT NULL,
  definition TEXT NOT NULL,
  status TEXT NOT NULL,
  parent_run_id TEXT,
  parent_node_id TEXT,
  inputs TEXT NOT NULL,
  variables TEXT NOT NULL,
  tags TEXT NOT NULL,
  metadata TEXT NOT NULL,
  configurable TEXT NOT NULL,
  principal TEXT,
  idempotency_key TEXT UNIQUE,
  request_digest TEXT,
  traceparent TEXT,
  error TEXT,
  created_at TEXT NOT NULL,
  started_at TEXT,
  completed_at TEXT,
  last_seq BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS openwop_runs_status ON openwop_runs (status);
CREATE INDEX IF NOT EXISTS openwop_runs_parent ON openwop_runs (parent_run_id);
CREATE TABLE IF NOT EXISTS openwop_events (
  run_id TEXT NOT NULL,
  sequence BIGINT NOT NULL,
  event_id TEXT NOT NULL UNIQUE,
  type TEXT NOT NULL,
  node_id TEXT,
  causation_id TEXT,
  ts TEXT NOT NULL,
  payload TEXT NOT NULL,
  PRIMARY KEY (run_id, sequence)
);
`;

const ERA_DDL = 'ALTER TABLE openwop_runs ADD COLUMN event_log_schema_version INTEGER;';

const done = new WeakMap<Db, Promise<void>>();

/**
 * Creates the OpenWOP tables once per store through the shared `migrate` (recorded as
 * `openwop.v1`); the event table is append-only at the database level (UPDATE/DELETE refused).
 */
export function ensureOpenwopTables(db: Db): Promise<void> {
  let p = done.get(db);
  if (!p) {
    p = migrate(db, 'openwop.v1', (dialect) => `${TABLES}\n${appendOnlyDdl(dialect, 'openwop_events')}`)
      // Issue 19: runs shared by several processes on one PostgreSQL store carry a fencing lease.
      .then(() => ensureRunLeases(db))
      .then(() => ensureRunRequests(db))
      // Issue 20: every registered definition is kept as a version with its digest.
      .then(() => ensureWorkflowVersions(db))
      // Issue 17: the Layer-2 effect records of runs, read by run id.
      .then(() => ensureRunEffects(db))
      // Issue 17: the era key of each run (v2 persistence.md); existing rows stay without one (read as era 2).
      .then(() => migrate(db, 'openwop.run-era', ERA_DDL))
      .then(() => undefined);
    done.set(db, p);
    p.catch(() => done.delete(db));
  }
  return p;
}
