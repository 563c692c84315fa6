import { hostname } from 'node:os';
import { ErrorCode, HostError, isoAt } from '../core/index.js';
import { migrate, ownerAlive } from '../ledger/index.js';
import type { Db } from '../ledger/index.js';

/**
 * One row per enabled connector attached by a host process on a shared PostgreSQL store (issue 19): who holds it,
 * the fencing token (raised by one on every takeover) and until when. Keyed by connector: a connector is what is
 * enabled and connected, and its endpoint id is known only once connected (the manifest), so `endpoint_id` is filled
 * in by the holder for the operator view. Renewed in place; deleted when the connector is disabled here.
 */
export const ENDPOINT_LEASES_DDL = `CREATE TABLE endpoint_leases (
  connector_id TEXT PRIMARY KEY,
  endpoint_id TEXT,
  owner TEXT NOT NULL,
  token BIGINT NOT NULL,
  expires_at_ms BIGINT NOT NULL,
  renewed_at TEXT NOT NULL
);`;

/** A stored endpoint lease. */
export interface EndpointLeaseRow {
  connector_id: string;
  endpoint_id: string | null;
  owner: string;
  token: number;
  expires_at_ms: number;
  renewed_at: string;
}

/** A lease this process holds: the connector, the token its fenced appends carry, and the holder before it. */
export interface HeldEndpointLease {
  connectorId: string;
  token: number;
  /** The process that held it before this takeover (null for a first claim). */
  previous: string | null;
}

/** Creates `endpoint_leases` once per PostgreSQL store (migration `engine.endpoint-leases`); SQLite never uses it. */
export async function ensureEndpointLeases(db: Db): Promise<void> {
  if (db.dialect !== 'postgres') return;
  await migrate(db, 'engine.endpoint-leases', ENDPOINT_LEASES_DDL);
}

const rowOf = (r: EndpointLeaseRow): EndpointLeaseRow => ({
  ...r,
  token: Number(r.token),
  expires_at_ms: Number(r.expires_at_ms),
});

/** The refusal of an attach or side effect by a process that does not hold `connectorId`'s lease. */
export function endpointLeaseLost(
  connectorId: string,
  owner: string,
  token: number,
  row?: EndpointLeaseRow,
): HostError {
  return new HostError(
    ErrorCode.HOST_ENDPOINT_LEASE_LOST,
    row
      ? `connector ${connectorId} is attached by ${row.owner} (token ${row.token}); ${owner} held token ${token}`
      : `connector ${connectorId} has no lease held by ${owner}`,
    { connectorId, owner, token, ...(row ? { heldBy: row.owner, heldToken: Number(row.token) } : {}) },
    { remediation: 'Nothing to do: the process holding the endpoint lease attaches it; send through that process.' },
  );
}

/**
 * The fence, inside the caller's write transaction: passes only while `owner` holds `connectorId` with `token`, else
 * raises `MHS.HOST.ENDPOINT_LEASE_LOST`. `FOR SHARE` keeps a takeover from committing between check and commit.
 */
export async function checkEndpointLease(t: Db, connectorId: string, owner: string, token: number): Promise<void> {
  const row = await t.get<EndpointLeaseRow>(
    `SELECT connector_id, endpoint_id, owner, token, expires_at_ms, renewed_at FROM endpoint_leases
     WHERE connector_id = ? FOR SHARE`,
    [connectorId],
  );
  if (!row || row.owner !== owner || Number(row.token) !== token)
    throw endpointLeaseLost(connectorId, owner, token, row ? rowOf(row) : undefined);
}

/** Options of {@link claimEndpoints}. */
export interface EndpointClaimOptions {
  ttlMs: number;
  skewMs: number;
  /** The enabled connectors this process may attach. */
  connectorIds: readonly string[];
  /** Leases this process holds now (connector → token): never "taken over" from itself. */
  held: ReadonlyMap<string, number>;
  /** Claims at most this many (its fair share left, src/engine/endpoint-spread.ts); default no limit. */
  limit?: number;
}

/**
 * One sweep: claims, with `FOR UPDATE SKIP LOCKED`, every enabled connector that has no lease (token 1), whose lease
 * lapsed by more than the skew, or whose holder is a process on this machine that is gone (by pid, as device gates
 * and run leases judge it); a takeover raises the token by one. Several processes sweeping at once claim disjoint
 * connectors.
 */
export function claimEndpoints(
  db: Db,
  owner: string,
  nowMs: number,
  o: EndpointClaimOptions,
): Promise<HeldEndpointLease[]> {
  const ids = o.connectorIds.filter((id) => !o.held.has(id));
  const limit = o.limit ?? Infinity;
  if (!ids.length || limit <= 0) return Promise.resolve([]);
  return db.tx(async (t) => {
    const out: HeldEndpointLease[] = [];
    const known = new Set(
      (
        await t.all<{ connector_id: string }>(
          'SELECT connector_id FROM endpoint_leases WHERE connector_id = ANY(?::text[])',
          [ids],
        )
      ).map((r) => r.connector_id),
    );
    // Inserted a share at a time: a concurrent sweeper may have just inserted some of the same ids (its conflict
    // resolves when it commits), so the next ones are tried until this sweep has its share or none is left.
    const unleased = ids.filter((id) => !known.has(id));
    const fresh: Array<{ connector_id: string; token: number }> = [];
    for (let at = 0; at < unleased.length && fresh.length < limit;) {
      const chunk = unleased.slice(at, at + Math.min(limit - fresh.length, unleased.length));
      at += chunk.length;
      fresh.push(
        ...(await t.all<{ connector_id: string; token: number }>(
          `INSERT INTO endpoint_leases (connector_id, owner, token, expires_at_ms, renewed_at)
           SELECT c, ?, 1, ?, ? FROM unnest(?::text[]) AS c
           ON CONFLICT (connector_id) DO NOTHING RETURNING connector_id, token`,
          [owner, nowMs + o.ttlMs, isoAt(nowMs), chunk],
        )),
      );
    }
    for (const r of fresh) out.push({ connectorId: r.connector_id, token: Number(r.token), previous: null });
    const rest = ids.filter((id) => known.has(id));
    if (!rest.length || fresh.length >= limit) return out;
    const candidates = await t.all<{ connector_id: string; owner: string; token: number; expires_at_ms: number }>(
      `SELECT connector_id, owner, token, expires_at_ms FROM endpoint_leases
       WHERE connector_id = ANY(?::text[]) AND (expires_at_ms < ? OR owner LIKE ?)
       FOR UPDATE SKIP LOCKED`,
      [rest, nowMs - o.skewMs, `${hostname()}:%`],
    );
    // A row under this process's own id that it does not hold is a previous process's with the same pid.
    const take = candidates
      .filter((r) => Number(r.expires_at_ms) < nowMs - o.skewMs || r.owner === owner || ownerAlive(r.owner) === false)
      .slice(0, limit - fresh.length);
    if (!take.length) return out;
    const rows = await t.all<{ connector_id: string; token: number }>(
      `UPDATE endpoint_leases SET owner = ?, token = token + 1, expires_at_ms = ?, renewed_at = ?
       WHERE connector_id = ANY(?::text[]) RETURNING connector_id, token`,
      [owner, nowMs + o.ttlMs, isoAt(nowMs), take.map((r) => r.connector_id)],
    );
    const before = new Map(take.map((r) => [r.connector_id, r.owner]));
    for (const r of rows)
      out.push({ connectorId: r.connector_id, token: Number(r.token), previous: before.get(r.connector_id) ?? null });
    return out;
  });
}

/** Extends the leases `owner` still holds as `held`; returns the connector ids renewed (the others were taken). */
export async function renewEndpointLeases(
  db: Db,
  owner: string,
  held: ReadonlyArray<{ connectorId: string; token: number }>,
  nowMs: number,
  ttlMs: number,
): Promise<Set<string>> {
  if (!held.length) return new Set();
  const rows = await db.all<{ connector_id: string }>(
    `UPDATE endpoint_leases AS l SET expires_at_ms = ?, renewed_at = ?
     FROM unnest(?::text[], ?::bigint[]) AS h(connector_id, token)
     WHERE l.connector_id = h.connector_id AND l.token = h.token AND l.owner = ? RETURNING l.connector_id`,
    [nowMs + ttlMs, isoAt(nowMs), held.map((h) => h.connectorId), held.map((h) => h.token), owner],
  );
  return new Set(rows.map((r) => r.connector_id));
}

/** Names the endpoint a held connector turned out to be (operator view). */
export async function nameEndpoint(db: Db, connectorId: string, token: number, endpointId: string): Promise<void> {
  await db.run('UPDATE endpoint_leases SET endpoint_id = ? WHERE connector_id = ? AND token = ?', [
    endpointId,
    connectorId,
    token,
  ]);
}

/** Lets leases go at once (clean shutdown): other processes claim them at their next sweep. */
export async function releaseEndpointLeases(
  db: Db,
  owner: string,
  held: ReadonlyArray<{ connectorId: string; token: number }>,
): Promise<void> {
  if (!held.length) return;
  await db.run(
    `UPDATE endpoint_leases AS l SET expires_at_ms = 0 FROM unnest(?::text[], ?::bigint[]) AS h(connector_id, token)
     WHERE l.connector_id = h.connector_id AND l.token = h.token AND l.owner = ?`,
    [held.map((h) => h.connectorId), held.map((h) => h.token), owner],
  );
}

/** Every endpoint lease of the store, by owner then connector (operator view); none on SQLite. */
export async function listEndpointLeases(db: Db): Promise<EndpointLeaseRow[]> {
  if (db.dialect !== 'postgres') return [];
  try {
    const rows = await db.all<EndpointLeaseRow>(
      `SELECT connector_id, endpoint_id, owner, token, expires_at_ms, renewed_at FROM endpoint_leases
       ORDER BY owner, connector_id`,
    );
    return rows.map(rowOf);
  } catch {
    // A store whose processes never leased endpoints has no such table.
    return [];
  }
}
