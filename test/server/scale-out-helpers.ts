// Shared fixtures of the issue-19 tests: real HTTP simulators enabled as connectors on one (PostgreSQL) store, so that
// every `mhs-host serve` process on that store attaches them, and the simulators' own execution counters.
import { RealClock } from '../../src/core/index.js';
import { openDb, openLedger } from '../../src/ledger/index.js';
import type { LedgerEntry } from '../../src/ledger/index.js';
import { openConnectorStore } from '../../src/policy/connector-store.js';
import { createEnablement } from '../../src/policy/enablement.js';
import { callMhs, connectMcpClient } from '../helpers/sim.js';
import type { SimHttp } from '../helpers/sim.js';

/** Registers and enables one HTTP connector per simulator on the store at `location` (as `test-setup`). */
export async function enableSims(location: string, sims: Record<string, SimHttp>, prefix: string): Promise<void> {
  const clock = new RealClock();
  const db = await openDb(location);
  try {
    const ledger = await openLedger(db, { clock });
    const store = await openConnectorStore(db, { clock });
    const enablement = createEnablement({ store, ledger });
    for (const [name, sim] of Object.entries(sims)) {
      await store.upsertDiscovered({
        connector_id: `${prefix}-${name}`,
        transport: 'http',
        url: sim.mcpUrl,
        base_url: sim.url,
        endpoint_id: sim.endpointId,
        display_name: name,
        source: { kind: 'env', ref: 'MHS_ENDPOINTS' },
        seen_in: [{ kind: 'env', ref: 'MHS_ENDPOINTS' }],
        auth: { scheme: 'none' },
        descriptor: null,
      });
      await enablement.enable(`${prefix}-${name}`, { id: 'test-setup', via: 'test' });
    }
  } finally {
    await db.close();
  }
}

/** The simulator's own counts for `device`: executions per command id, and capability calls it received at all. */
export async function simCounters(
  sim: SimHttp,
  device: string,
): Promise<{ executions: Record<string, number>; calls: number }> {
  const c = await connectMcpClient({ mcpUrl: sim.mcpUrl });
  try {
    const r = await callMhs(c, 'mhs__read', { device_id: device, resource: '_counters' });
    const state = r.body.state as { executions: Record<string, number>; capability_calls: number };
    return { executions: state.executions, calls: state.capability_calls };
  } finally {
    await c.close();
  }
}

/** The simulator's own counters of `device` with its attach counters (manifest reads, session opens), unparsed. */
export async function simAttachCounters(sim: SimHttp, device: string): Promise<Record<string, unknown>> {
  const c = await connectMcpClient({ mcpUrl: sim.mcpUrl });
  try {
    const read = async (resource: string) =>
      (await callMhs(c, 'mhs__read', { device_id: device, resource })).body.state as Record<string, unknown>;
    return { ...(await read('_counters')), ...(await read('_attach_counters')) };
  } finally {
    await c.close();
  }
}

/** Every ledger entry of the store at `location`, and whether the chain verifies. */
export async function ledgerOf(location: string): Promise<{ entries: LedgerEntry[]; verified: boolean }> {
  const db = await openDb(location);
  try {
    const ledger = await openLedger(db, { clock: new RealClock() });
    return { entries: await ledger.range(0), verified: (await ledger.verify()).ok };
  } finally {
    await db.close();
  }
}
