import { appendOnlyDdl, migrate } from '../../ledger/index.js';
import type { Db } from '../../ledger/index.js';

/**
 * The prompt library table: one row per `templateId@version`, the template stored as canonical JSON with its
 * digest. Rows are append-only at the database level, so a pinned version can never change under a run (RFC 0144).
 */
const TABLES = `
CREATE TABLE IF NOT EXISTS openwop_prompt_templates (
  template_id TEXT NOT NULL,
  version TEXT NOT NULL,
  kind TEXT NOT NULL,
  template TEXT NOT NULL,
  digest TEXT NOT NULL,
  source TEXT NOT NULL,
  stored_at TEXT NOT NULL,
  PRIMARY KEY (template_id, version)
);
`;

// Deletions through `DELETE /v1/prompts/{templateId}` (RFC 0028 §A): a tombstone per hidden version, itself
// append-only, so a deleted version stays readable by pin (replay) but leaves the library's listing and "latest".
const DELETIONS = `
CREATE TABLE IF NOT EXISTS openwop_prompt_deletions (
  template_id TEXT NOT NULL,
  version TEXT NOT NULL,
  deleted_at TEXT NOT NULL,
  PRIMARY KEY (template_id, version)
);
`;

const done = new WeakMap<Db, Promise<void>>();

/** Creates the prompt library tables once per store (migrations `openwop.prompts.v1`, `openwop.prompts.deletions.v1`). */
export function ensurePromptTables(db: Db): Promise<void> {
  let p = done.get(db);
  if (!p) {
    p = migrate(
      db,
      'openwop.prompts.v1',
      (dialect) => `${TABLES}\n${appendOnlyDdl(dialect, 'openwop_prompt_templates')}`,
    )
      .then(() =>
        migrate(
          db,
          'openwop.prompts.deletions.v1',
          (dialect) => `${DELETIONS}\n${appendOnlyDdl(dialect, 'openwop_prompt_deletions')}`,
        ),
      )
      .then(() => undefined);
    done.set(db, p);
    p.catch(() => done.delete(db));
  }
  return p;
}
