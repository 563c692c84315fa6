import type { Clock } from '../core/index.js';
import { openHostRuntime } from '../engine/host-runtime.js';
import type { HostRuntime } from '../engine/host-runtime.js';
import type { PolicySource } from '../engine/operator-runtime.js';
import type { Db } from '../ledger/index.js';

/** @deprecated The one host runtime is {@link HostRuntime} (src/engine/host-runtime.ts); this name stays for API users. */
export type MhsRuntime = HostRuntime;

/**
 * @deprecated Use `openHostRuntime({ db, clock, policy, attachEnabled: true })`: this is that call, kept so
 * existing imports of the server package keep working. The caller closes `db`.
 */
export function openMhsRuntime(db: Db, clock: Clock, policy?: PolicySource): Promise<HostRuntime> {
  return openHostRuntime({ db, clock, attachEnabled: true, ...(policy ? { policy } : {}) });
}
