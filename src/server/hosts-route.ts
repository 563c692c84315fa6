import type { FastifyInstance } from 'fastify';
import { isoAt } from '../core/index.js';
import type { Clock } from '../core/index.js';
import { GATE_OWNER, ownerStatus } from '../ledger/index.js';
import type { Db } from '../ledger/index.js';
import { listRunLeases } from '../openwop/run-leases.js';
import { listEndpointLeases } from '../engine/endpoint-leases.js';
import { principalOf } from './auth.js';
import type { BearerVerifier } from './auth.js';

/** One host process as `GET /v1/operator/hosts` lists it. */
export interface HostProcessView {
  /** `hostname:pid`, the id its device gates, host lease and run leases carry. */
  owner: string;
  /** True for the process that answered. */
  self: boolean;
  /** Running (by pid on this machine, else by its leases), gone, or null when nobody can tell. */
  running: boolean | null;
  /** Its host lease (held while it may hold device gates), or null when it never took one. */
  host_lease: { started_at: string; renewed_at: string; expires_at: string; ended_at: string | null } | null;
  /** The runs whose lease it holds, with the fencing token its writes carry. */
  runs: Array<{ run_id: string; token: number; expires_at: string }>;
  /** The connectors whose endpoint lease it holds (it attaches them), with the fencing token and expiry. */
  endpoints: Array<{ connector_id: string; endpoint_id: string | null; token: number; expires_at: string }>;
}

interface HostLeaseRow {
  owner: string;
  started_at: string;
  renewed_at: string;
  expires_at_ms: number | string;
  ended_at: string | null;
}

async function hostLeases(db: Db): Promise<HostLeaseRow[]> {
  try {
    return await db.all<HostLeaseRow>(
      'SELECT owner, started_at, renewed_at, expires_at_ms, ended_at FROM host_leases ORDER BY owner',
    );
  } catch {
    // A store without the ledger tables (`serve --no-mhs`) has no host leases.
    return [];
  }
}

/**
 * The host processes of this store (issue 19): every process with a host lease or a run lease, whether it is
 * running, and the runs it drives. On SQLite the one process drives every run and holds no run leases. `self` is the
 * process asking (listed even without leases), null for a CLI that is not a host.
 */
export async function hostsView(db: Db, clock: Clock, self: string | null = GATE_OWNER): Promise<HostProcessView[]> {
  const now = clock.now();
  const byOwner = new Map<string, HostProcessView>();
  const entry = (owner: string): HostProcessView => {
    let v = byOwner.get(owner);
    if (!v)
      byOwner.set(
        owner,
        (v = { owner, self: owner === self, running: null, host_lease: null, runs: [], endpoints: [] }),
      );
    return v;
  };
  if (self !== null) entry(self);
  for (const r of await hostLeases(db))
    entry(r.owner).host_lease = {
      started_at: r.started_at,
      renewed_at: r.renewed_at,
      expires_at: isoAt(Number(r.expires_at_ms)),
      ended_at: r.ended_at,
    };
  for (const l of await listRunLeases(db))
    entry(l.owner).runs.push({ run_id: l.run_id, token: l.token, expires_at: isoAt(l.expires_at_ms) });
  for (const l of await listEndpointLeases(db))
    entry(l.owner).endpoints.push({
      connector_id: l.connector_id,
      endpoint_id: l.endpoint_id,
      token: l.token,
      expires_at: isoAt(l.expires_at_ms),
    });
  for (const v of byOwner.values()) {
    if (v.self) {
      v.running = true;
      continue;
    }
    // By pid on this machine, else by the host lease, else by whether any of its run leases is unexpired.
    const byHost = await ownerStatus(db, v.owner, now).catch(() => null);
    const leases = [...v.runs, ...v.endpoints];
    v.running = byHost ?? (leases.length ? leases.some((r) => Date.parse(r.expires_at) >= now) : null);
  }
  return [...byOwner.values()].sort((a, b) => a.owner.localeCompare(b.owner));
}

/** `GET /v1/operator/hosts`: {@link hostsView} for any client or operator token (read-only). */
export function registerHostsRoute(app: FastifyInstance, deps: { db: Db; clock: Clock; auth: BearerVerifier }): void {
  app.get('/v1/operator/hosts', async (req) => {
    await principalOf(req, deps.auth);
    return { self: GATE_OWNER, processes: await hostsView(deps.db, deps.clock) };
  });
}

/** The OpenAPI description of {@link registerHostsRoute}. */
export const hostsOpenApiPaths = {
  '/v1/operator/hosts': {
    get: {
      summary:
        'Host processes of this store (issue 19): each with its host lease, whether it is running, the runs it drives and the endpoints it attaches, with their fencing tokens',
      responses: {
        '200': { description: 'processes', content: { 'application/json': { schema: { type: 'object' } } } },
        '401': { description: 'unauthorized' },
      },
    },
  },
} as const;
