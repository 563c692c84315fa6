import { hostname } from 'node:os';
import { ErrorCode, HostError, isoAt } from '../core/index.js';
import { migrate, ownerAlive } from '../ledger/index.js';
import type { Db } from '../ledger/index.js';

/**
 * One row per OpenWOP run that a host process drives on a shared PostgreSQL store (issue 19): who owns it, the
 * fencing token (raised by one on every takeover) and until when the owner counts as alive. Not append-only; renewed
 * in place, deleted in the transaction of the run's terminal event.
 */
export const RUN_LEASES_DDL = `CREATE TABLE run_leases (
  run_id TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  token BIGINT NOT NULL,
  expires_at_ms BIGINT NOT NULL,
  renewed_at TEXT NOT NULL
);
CREATE INDEX run_leases_expiry ON run_leases (expires_at_ms);`;

/**
 * One row per live host process of the store that drives runs (issue 19): renewed with its leases, deleted on a clean
 * close. New runs are spread over these processes by their load (the leases each holds).
 */
export const RUN_HOSTS_DDL = `CREATE TABLE run_hosts (
  owner TEXT PRIMARY KEY,
  expires_at_ms BIGINT NOT NULL,
  renewed_at TEXT NOT NULL
);`;

/** A stored run lease. */
export interface RunLeaseRow {
  run_id: string;
  owner: string;
  token: number;
  expires_at_ms: number;
  renewed_at: string;
}

/** A lease this process holds: the run and the token its appends carry. */
export interface HeldLease {
  runId: string;
  token: number;
}

const TERMINAL = `('completed', 'failed', 'cancelled')`;

/** Creates `run_leases` once per PostgreSQL store (migration `openwop.run-leases`); SQLite never uses it. */
export async function ensureRunLeases(db: Db): Promise<void> {
  if (db.dialect !== 'postgres') return;
  await migrate(db, 'openwop.run-leases', RUN_LEASES_DDL);
  await migrate(db, 'openwop.run-hosts', RUN_HOSTS_DDL);
}

/** Marks `owner` live until `nowMs + ttlMs` (with its lease renewals). */
export async function heartbeatRunHost(db: Db, owner: string, nowMs: number, ttlMs: number): Promise<void> {
  await db.run(
    `INSERT INTO run_hosts (owner, expires_at_ms, renewed_at) VALUES (?, ?, ?)
     ON CONFLICT (owner) DO UPDATE SET expires_at_ms = excluded.expires_at_ms, renewed_at = excluded.renewed_at`,
    [owner, nowMs + ttlMs, isoAt(nowMs)],
  );
}

/** Removes `owner` from the live processes (clean close). */
export async function removeRunHost(db: Db, owner: string): Promise<void> {
  await db.run('DELETE FROM run_hosts WHERE owner = ?', [owner]);
}

/**
 * The live run-driving processes and the unlapsed leases each holds, least loaded first (inside the caller's
 * transaction). A process on this machine whose pid is gone is not live, whatever its row says.
 */
export async function liveRunHosts(t: Db, nowMs: number): Promise<Array<{ owner: string; load: number }>> {
  const rows = await t.all<{ owner: string; load: number | string }>(
    `SELECT h.owner, (SELECT count(*) FROM run_leases l WHERE l.owner = h.owner AND l.expires_at_ms >= ?) AS load
     FROM run_hosts h WHERE h.expires_at_ms >= ? ORDER BY 2, 1`,
    [nowMs, nowMs],
  );
  return rows.map((r) => ({ owner: r.owner, load: Number(r.load) })).filter((r) => ownerAlive(r.owner) !== false);
}

/** This process's lease of `runId`, when it is the owner the row names. */
export async function leaseOf(db: Db, runId: string, owner: string): Promise<RunLeaseRow | undefined> {
  const row = await db.get<RunLeaseRow>(
    'SELECT run_id, owner, token, expires_at_ms, renewed_at FROM run_leases WHERE run_id = ? AND owner = ?',
    [runId, owner],
  );
  return row ? { ...row, token: Number(row.token), expires_at_ms: Number(row.expires_at_ms) } : undefined;
}

/** The lease rows of `runIds` that exist (committed), whoever holds them: run id → `owner` and `token`. */
export async function leaseRowsOf(
  db: Db,
  runIds: readonly string[],
): Promise<Map<string, { owner: string; token: number }>> {
  if (!runIds.length) return new Map();
  const rows = await db.all<{ run_id: string; owner: string; token: number }>(
    'SELECT run_id, owner, token FROM run_leases WHERE run_id = ANY(?::text[])',
    [[...runIds]],
  );
  return new Map(rows.map((r) => [r.run_id, { owner: r.owner, token: Number(r.token) }]));
}

/** The refusal of a write by a process whose lease of `runId` was taken over (or ended). */
export function runLeaseLost(runId: string, owner: string, token: number, row?: RunLeaseRow): HostError {
  return new HostError(
    ErrorCode.HOST_RUN_LEASE_LOST,
    row
      ? `run ${runId} is driven by ${row.owner} (token ${row.token}); ${owner} held token ${token}`
      : `run ${runId} has no lease held by ${owner}`,
    { runId, owner, token, ...(row ? { heldBy: row.owner, heldToken: Number(row.token) } : {}) },
    { remediation: 'Nothing to do: the process holding the lease drives the run.' },
  );
}

/** Takes the lease of a run just inserted, in the insert's transaction: token 1. */
export async function insertRunLease(t: Db, runId: string, owner: string, nowMs: number, ttlMs: number): Promise<void> {
  await t.run('INSERT INTO run_leases (run_id, owner, token, expires_at_ms, renewed_at) VALUES (?, ?, 1, ?, ?)', [
    runId,
    owner,
    nowMs + ttlMs,
    isoAt(nowMs),
  ]);
}

/**
 * The fence, inside the caller's write transaction: passes only while `owner` holds `runId`'s lease with `token`,
 * else raises `MHS.HOST.RUN_LEASE_LOST`. `FOR SHARE` keeps a takeover (which updates the row) from committing
 * between this check and the caller's commit, and makes a check that waited on a takeover see its new token.
 */
export async function checkRunLease(t: Db, runId: string, owner: string, token: number): Promise<void> {
  const row = await t.get<RunLeaseRow>(
    'SELECT run_id, owner, token, expires_at_ms, renewed_at FROM run_leases WHERE run_id = ? FOR SHARE',
    [runId],
  );
  if (!row || row.owner !== owner || Number(row.token) !== token) throw runLeaseLost(runId, owner, token, row);
}

/** Ends a lease with its run (the terminal event's transaction). */
export async function endRunLease(t: Db, runId: string, token: number): Promise<void> {
  await t.run('DELETE FROM run_leases WHERE run_id = ? AND token = ?', [runId, token]);
}

/** Extends the leases still held as `held` by `owner`; returns the run ids renewed (the others were taken over). */
export async function renewRunLeases(
  db: Db,
  owner: string,
  held: readonly HeldLease[],
  nowMs: number,
  ttlMs: number,
): Promise<Set<string>> {
  if (!held.length) return new Set();
  const rows = await db.all<{ run_id: string }>(
    `UPDATE run_leases AS l SET expires_at_ms = ?, renewed_at = ?
     FROM unnest(?::text[], ?::bigint[]) AS h(run_id, token)
     WHERE l.run_id = h.run_id AND l.token = h.token AND l.owner = ? RETURNING l.run_id`,
    [nowMs + ttlMs, isoAt(nowMs), held.map((h) => h.runId), held.map((h) => h.token), owner],
  );
  return new Set(rows.map((r) => r.run_id));
}

/** Options of {@link claimLapsedRuns}. */
export interface ClaimOptions {
  ttlMs: number;
  /** Clock difference tolerated between machines before a lapsed lease may be taken (as host leases). */
  skewMs: number;
  /** Most runs taken in one sweep, so that several live processes share a dead one's runs. */
  limit: number;
  /**
   * The token of each lease this process holds (never taken over from itself), read after the candidates are selected:
   * a run this process created meanwhile is held by then (its lease is set as held before its insert commits).
   */
  held: { get(runId: string): number | undefined };
}

/**
 * Takes over (token + 1) the non-terminal runs whose lease lapsed by more than the skew, whose owner is a process on
 * this machine that is gone, or that have no lease at all (runs stored before leases). `FOR UPDATE SKIP LOCKED`:
 * several processes sweeping at once take disjoint runs, and a row an append is fencing on is left for later.
 */
export function claimLapsedRuns(db: Db, owner: string, nowMs: number, o: ClaimOptions): Promise<HeldLease[]> {
  return db.tx(async (t) => {
    const select = `SELECT l.run_id, l.owner, l.token FROM run_leases l JOIN openwop_runs r ON r.run_id = l.run_id
      WHERE r.status NOT IN ${TERMINAL}`;
    const lapsed = await t.all<{ run_id: string; owner: string; token: number }>(
      `${select} AND l.expires_at_ms < ? ORDER BY l.expires_at_ms LIMIT ? FOR UPDATE OF l SKIP LOCKED`,
      [nowMs - o.skewMs, o.limit],
    );
    // An owner on this machine is judged by its pid (as device gates are); a stale row under this process's own id
    // (a previous process that had the same pid) is not one of its leases.
    const local = await t.all<{ run_id: string; owner: string; token: number }>(
      `${select} AND l.expires_at_ms >= ? AND l.owner LIKE ? FOR UPDATE OF l SKIP LOCKED`,
      [nowMs - o.skewMs, `${hostname()}:%`],
    );
    const mine = (r: { run_id: string; owner: string; token: number }) =>
      r.owner === owner && o.held.get(r.run_id) === Number(r.token);
    const take = [
      ...lapsed.filter((r) => !mine(r)),
      ...local.filter((r) => (r.owner === owner ? !mine(r) : ownerAlive(r.owner) === false)),
    ]
      .slice(0, o.limit)
      .map((r) => r.run_id);
    const out: HeldLease[] = [];
    if (take.length) {
      const rows = await t.all<{ run_id: string; token: number }>(
        `UPDATE run_leases SET owner = ?, token = token + 1, expires_at_ms = ?, renewed_at = ?
         WHERE run_id = ANY(?::text[]) RETURNING run_id, token`,
        [owner, nowMs + o.ttlMs, isoAt(nowMs), take],
      );
      for (const r of rows) out.push({ runId: r.run_id, token: Number(r.token) });
    }
    if (out.length < o.limit) {
      const orphans = await t.all<{ run_id: string; token: number }>(
        `INSERT INTO run_leases (run_id, owner, token, expires_at_ms, renewed_at)
         SELECT r.run_id, ?, 1, ?, ? FROM openwop_runs r
         WHERE r.status NOT IN ${TERMINAL} AND NOT EXISTS (SELECT 1 FROM run_leases l WHERE l.run_id = r.run_id)
         ORDER BY r.created_at LIMIT ?
         ON CONFLICT (run_id) DO NOTHING RETURNING run_id, token`,
        [owner, nowMs + o.ttlMs, isoAt(nowMs), o.limit - out.length],
      );
      for (const r of orphans) out.push({ runId: r.run_id, token: Number(r.token) });
    }
    return out;
  });
}

/** Lets the leases go at once (clean shutdown): other processes take the runs at their next sweep. */
export async function releaseRunLeases(db: Db, owner: string, held: readonly HeldLease[]): Promise<void> {
  if (!held.length) return;
  await db.run(
    `UPDATE run_leases AS l SET expires_at_ms = 0 FROM unnest(?::text[], ?::bigint[]) AS h(run_id, token)
     WHERE l.run_id = h.run_id AND l.token = h.token AND l.owner = ?`,
    [held.map((h) => h.runId), held.map((h) => h.token), owner],
  );
}

/** Every run lease in the store, by owner then run (operator view). */
export async function listRunLeases(db: Db): Promise<RunLeaseRow[]> {
  if (db.dialect !== 'postgres') return [];
  const rows = await db.all<RunLeaseRow>(
    'SELECT run_id, owner, token, expires_at_ms, renewed_at FROM run_leases ORDER BY owner, run_id',
  );
  return rows.map((r) => ({ ...r, token: Number(r.token), expires_at_ms: Number(r.expires_at_ms) }));
}
