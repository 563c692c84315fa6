/**
 * Spreading endpoint leases over the live host processes of a shared PostgreSQL store (issue 19): each process that
 * leases endpoints keeps a row in `endpoint_hosts`; a process claims at most its fair share, ceil(enabled / live), and
 * one holding more hands an idle endpoint over to the least loaded live process (never one with a command in flight,
 * an open approval or a held device gate).
 */
import { isoAt } from '../core/index.js';
import { migrate, ownerAlive } from '../ledger/index.js';
import type { Db } from '../ledger/index.js';
import { ENDPOINT_REQUESTS_CHANNEL } from './endpoint-requests.js';

/** Migration `engine.endpoint-hosts`: the processes leasing endpoints, renewed with their leases. */
export const ENDPOINT_HOSTS_DDL = `CREATE TABLE endpoint_hosts (
  owner TEXT PRIMARY KEY,
  expires_at_ms BIGINT NOT NULL,
  renewed_at TEXT NOT NULL
);`;

/** Creates `endpoint_hosts` once per PostgreSQL store. */
export async function ensureEndpointHosts(db: Db): Promise<void> {
  if (db.dialect !== 'postgres') return;
  await migrate(db, 'engine.endpoint-hosts', ENDPOINT_HOSTS_DDL);
}

/** Says this process is live until `nowMs + ttlMs`. */
export async function beatEndpointHost(db: Db, owner: string, nowMs: number, ttlMs: number): Promise<void> {
  await db.run(
    `INSERT INTO endpoint_hosts (owner, expires_at_ms, renewed_at) VALUES (?, ?, ?)
     ON CONFLICT (owner) DO UPDATE SET expires_at_ms = EXCLUDED.expires_at_ms, renewed_at = EXCLUDED.renewed_at`,
    [owner, nowMs + ttlMs, isoAt(nowMs)],
  );
}

/** A clean shutdown: this process no longer counts as live. */
export async function leaveEndpointHosts(db: Db, owner: string): Promise<void> {
  await db.run('DELETE FROM endpoint_hosts WHERE owner = ?', [owner]);
}

/** The live processes (row not lapsed past the skew, pid alive when on this machine) and the leases each holds. */
export async function liveEndpointHosts(
  db: Db,
  nowMs: number,
  skewMs: number,
): Promise<Array<{ owner: string; held: number }>> {
  const rows = await db.all<{ owner: string; held: number }>(
    `SELECT h.owner, (SELECT count(*) FROM endpoint_leases l WHERE l.owner = h.owner AND l.expires_at_ms >= ?) AS held
     FROM endpoint_hosts h WHERE h.expires_at_ms >= ? ORDER BY h.owner`,
    [nowMs - skewMs, nowMs - skewMs],
  );
  return rows.filter((r) => ownerAlive(r.owner) !== false).map((r) => ({ owner: r.owner, held: Number(r.held) }));
}

/** The fair share of one of `live` processes: ceil(enabled / live), at least 1 process counted. */
export function fairShare(enabled: number, live: number): number {
  return Math.ceil(enabled / Math.max(1, live));
}

const GATE_HELD = 'SELECT 1 AS x FROM device_gates WHERE endpoint_id = ? LIMIT 1';
const APPROVAL_OPEN = `SELECT 1 AS x FROM mhs_approvals WHERE endpoint_id = ? AND status IN ('pending', 'approved') LIMIT 1`;

/** Whether the store shows nothing under way on the endpoint: no device gate held, no approval open. */
export async function mayHandOver(db: Db, endpointId: string): Promise<boolean> {
  return !(await db.get(GATE_HELD, [endpointId])) && !(await db.get(APPROVAL_OPEN, [endpointId]));
}

/**
 * Hands `connectorId` (held by `owner` with `token`) to `to`, raising the token, in one transaction that locks the
 * lease (`FOR UPDATE`: an intent's fence check waits, then sees the new token) and refuses when the endpoint has a
 * device gate held in the store (an effectful command not settled) or an approval open for it (a call waiting for an
 * operator). `NOTIFY {k:'h', to}` makes `to` take it up at once. Returns the new token, or undefined (not handed over).
 */
export async function handOverEndpoint(
  db: Db,
  o: {
    connectorId: string;
    endpointId: string;
    owner: string;
    token: number;
    to: string;
    nowMs: number;
    ttlMs: number;
  },
): Promise<number | undefined> {
  return db.tx(async (t) => {
    const lease = await t.get<{ token: number }>(
      'SELECT token FROM endpoint_leases WHERE connector_id = ? AND owner = ? AND token = ? FOR UPDATE',
      [o.connectorId, o.owner, o.token],
    );
    if (!lease) return undefined;
    if (!(await mayHandOver(t, o.endpointId))) return undefined;
    const row = await t.get<{ token: number }>(
      `UPDATE endpoint_leases SET owner = ?, token = token + 1, expires_at_ms = ?, renewed_at = ?
       WHERE connector_id = ? RETURNING token`,
      [o.to, o.nowMs + o.ttlMs, isoAt(o.nowMs), o.connectorId],
    );
    await t.run('SELECT pg_notify(?, ?)', [ENDPOINT_REQUESTS_CHANNEL, JSON.stringify({ k: 'h', to: o.to })]);
    return row ? Number(row.token) : undefined;
  });
}

/** Leases assigned to `owner` (handed over by another process) that it does not hold yet. */
export async function assignedEndpoints(
  db: Db,
  owner: string,
  nowMs: number,
  held: ReadonlySet<string>,
): Promise<Array<{ connectorId: string; token: number }>> {
  const rows = await db.all<{ connector_id: string; token: number }>(
    'SELECT connector_id, token FROM endpoint_leases WHERE owner = ? AND expires_at_ms >= ?',
    [owner, nowMs],
  );
  return rows
    .filter((r) => !held.has(r.connector_id))
    .map((r) => ({ connectorId: r.connector_id, token: Number(r.token) }));
}
