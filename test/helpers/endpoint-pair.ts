// Issue 19 fixture: two real `mhs-host serve` processes on one fresh PostgreSQL schema and one real HTTP simulator.
// A (procs[0]) starts first and enables the simulator's connector, so it claims it; B (procs[1]) starts after it.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of HTTP responses are read loosely */
import { afterAll, beforeAll } from 'vitest';
import { openDb } from '../../src/ledger/index.js';
import { postgresBackend } from '../ledger/helpers.js';
import type { StoreHandle } from '../ledger/helpers.js';
import { enableSims } from '../server/scale-out-helpers.js';
import { client, serve } from '../server/serve-helpers.js';
import type { Served } from '../server/serve-helpers.js';
import { startSimHttp } from './sim.js';
import type { SimHttp } from './sim.js';

export interface EndpointPair {
  store: StoreHandle;
  /** The first simulator (`sims[0]`). */
  sim: SimHttp;
  sims: SimHttp[];
  procs: Served[];
}

/** The connector id of simulator `i` of a pair: `<prefix>-<family>`, then `<prefix>-<family>-2`, ... */
export const pairConnector = (prefix: string, family: string, i = 0): string =>
  `${prefix}-${family}${i ? `-${i + 1}` : ''}`;

/**
 * Registers the pair's `beforeAll`/`afterAll`: `count` (default 1) simulators of `family` (with `simFlags`), as the
 * connectors {@link pairConnector} names.
 */
export function endpointPair(o: {
  family: string;
  prefix: string;
  env: Record<string, string>;
  simFlags?: string[];
  count?: number;
}): EndpointPair {
  const h = {
    store: undefined as unknown as StoreHandle,
    sim: undefined as unknown as SimHttp,
    sims: [] as SimHttp[],
    procs: [] as Served[],
  };
  beforeAll(async () => {
    for (let i = 0; i < (o.count ?? 1); i++) h.sims.push(await startSimHttp(o.family, o.simFlags ?? []));
    h.sim = h.sims[0]!;
    h.store = await postgresBackend.fresh();
    h.procs.push(await serve(h.store.location, ['--no-workflows'], o.env));
    const named = Object.fromEntries(
      h.sims.map((s, i) => [pairConnector(o.prefix, o.family, i).slice(o.prefix.length + 1), s]),
    );
    await enableSims(h.store.location, named, o.prefix);
    h.procs.push(await serve(h.store.location, ['--no-workflows'], o.env));
  }, 180_000);
  afterAll(async () => {
    for (const p of h.procs) {
      if (p.child.exitCode !== null || p.child.signalCode !== null) continue;
      p.child.kill('SIGCONT');
      await p.stop();
    }
    for (const s of h.sims) await s.stop();
    await h.store?.cleanup();
  });
  return h;
}

/** Waits until `holder` alone is listed (through `via`) holding `connectorId`, named by its endpoint id. */
export async function heldBy(via: Served, holder: Served, token: string, connectorId: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const body = (await client(via.url, token).get('/v1/operator/hosts')).body;
    const owners = (body.processes as any[])
      .filter((p) => (p.endpoints as any[]).some((e) => e.connector_id === connectorId && e.endpoint_id))
      .map((p) => p.owner as string);
    if (owners.length === 1 && owners[0]!.endsWith(`:${holder.child.pid}`)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${connectorId} was never held by process ${holder.child.pid}`);
}

/** Every row of `endpoint_requests`, oldest first, with its `request` parsed into `op`. */
export async function endpointRequestsOf(location: string): Promise<any[]> {
  const db = await openDb(location);
  try {
    const rows = await db.all<any>('SELECT * FROM endpoint_requests ORDER BY created_at');
    return rows.map((r) => ({ ...r, op: JSON.parse(r.request as string) }));
  } finally {
    await db.close();
  }
}
