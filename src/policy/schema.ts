import type { Db } from '../ledger/db.js';

const done = new WeakMap<Db, Map<string, Promise<void>>>();

/**
 * Creates the policy layer's tables once per `Db` (idempotent DDL, `CREATE ... IF NOT EXISTS`).
 * `name` identifies the DDL version; the same name runs once per handle.
 */
export function ensureSchema(db: Db, name: string, ddl: string): Promise<void> {
  let byName = done.get(db);
  if (!byName) done.set(db, (byName = new Map()));
  let p = byName.get(name);
  if (!p) {
    p = db.exec(ddl);
    byName.set(name, p);
    p.catch(() => byName.delete(name));
  }
  return p;
}
