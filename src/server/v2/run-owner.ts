import type { OpenwopHost } from '../../openwop/host.js';
import type { StoredRun } from '../../openwop/store.js';
import { ownerOf } from '../../openwop/v2/index.js';
import type { V2Owner } from '../../openwop/v2/index.js';

// Lineage is finite (each fork names an older run); the bound only guards a corrupted row.
const MAX_LINEAGE = 64;

/**
 * The v2 owner of a stored run. A fork's owner is its source's, copied verbatim (v2 identity.md §1.3), so the
 * lineage in `metadata.forkedFrom` is followed to the root run, whose creating token is the owner.
 */
export async function runOwner(host: OpenwopHost, run: StoredRun): Promise<V2Owner> {
  let current = run;
  for (let i = 0; i < MAX_LINEAGE; i++) {
    const from = (current.metadata.forkedFrom as { sourceRunId?: unknown } | undefined)?.sourceRunId;
    const source = typeof from === 'string' ? await host.store.getRun(from) : undefined;
    if (!source) break;
    current = source;
  }
  return ownerOf(current.principal);
}
