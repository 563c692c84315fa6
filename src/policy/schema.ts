import type { Db } from '../ledger/db.js';
import { migrate } from '../ledger/index.js';

const done = new WeakMap<Db, Map<string, Promise<void>>>();

/**
 * Applies the policy layer's named migration once per store (recorded by `migrate`) and once per
 * handle in this process; later calls share the same promise.
 */
export function ensureSchema(db: Db, name: string, ddl: string): Promise<void> {
  let byName = done.get(db);
  if (!byName) done.set(db, (byName = new Map()));
  let p = byName.get(name);
  if (!p) {
    p = migrate(db, name, ddl).then(() => undefined);
    byName.set(name, p);
    p.catch(() => byName.delete(name));
  }
  return p;
}
