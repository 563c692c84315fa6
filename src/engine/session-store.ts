/**
 * Durable endpoint-session snapshots (HOST-036): one row per (endpoint, session scope key) holding the persisted
 * XState snapshot of its `machines/endpoint-session` actor, so a restarted host reuses a live session (its
 * heartbeat re-armed from the absolute deadlines in the snapshot) or reopens one whose `expires_at` passed.
 * Portable SQL through the shared {@link Db} (SQLite and PostgreSQL).
 */
import { storeCall } from '../ledger/db.js';
import type { Db } from '../ledger/db.js';
import { migrate } from '../ledger/migrate.js';

/** A persisted session machine. */
export interface PersistedSession {
  endpointId: string;
  /** The pool's key of this session: scope, device and capability set. */
  key: string;
  scope: string;
  deviceId: string;
  sessionId: string | null;
  /** Absolute local expiry (ms) in the snapshot, for status surfaces; the snapshot holds the truth. */
  expiresAt: number | null;
  /** `getPersistedSnapshot()` of the session actor. */
  snapshot: Record<string, unknown>;
}

/** Where session snapshots live. */
export interface SessionSnapshotStore {
  /**
   * With `fence` (the endpoint-lease fence, issue 19) the write runs in a transaction after it, so a process that lost
   * the endpoint never overwrites or deletes the snapshots its new holder restored.
   */
  save(s: PersistedSession, fence?: (t: Db) => Promise<void>): Promise<void>;
  remove(endpointId: string, key: string, fence?: (t: Db) => Promise<void>): Promise<void>;
  /** Every persisted session of one endpoint. */
  load(endpointId: string): Promise<PersistedSession[]>;
  /**
   * Deletes the rows of sessions that expired before `before` (ms), whatever their endpoint: an expired session is
   * never reused, and an endpoint that is never attached again would otherwise keep its rows forever. Returns the
   * number deleted.
   */
  prune(before: number): Promise<number>;
}

const DDL = `CREATE TABLE IF NOT EXISTS endpoint_sessions (
  endpoint_id TEXT NOT NULL,
  session_key TEXT NOT NULL,
  scope TEXT NOT NULL,
  device_id TEXT NOT NULL,
  session_id TEXT,
  expires_at BIGINT,
  snapshot TEXT NOT NULL,
  PRIMARY KEY (endpoint_id, session_key)
)`;

interface Row {
  endpoint_id: string;
  session_key: string;
  scope: string;
  device_id: string;
  session_id: string | null;
  expires_at: number | string | null;
  snapshot: string;
}

/**
 * Opens the session snapshot table on `db` (created once by migration `engine-001-endpoint-sessions`).
 * Store failures reject with `MHS.HOST.LEDGER_UNAVAILABLE`.
 */
export async function openSessionStore(db: Db): Promise<SessionSnapshotStore> {
  await migrate(db, 'engine-001-endpoint-sessions', DDL);
  const wrap = storeCall;
  const write = (fence: ((t: Db) => Promise<void>) | undefined, fn: (t: Db) => Promise<unknown>) =>
    wrap(async () => {
      if (!fence) await fn(db);
      else
        await db.tx(async (t) => {
          await fence(t);
          await fn(t);
        });
    });
  return {
    save: (s, fence) =>
      write(fence, async (db) => {
        await db.run(
          `INSERT INTO endpoint_sessions (endpoint_id, session_key, scope, device_id, session_id, expires_at, snapshot)
           VALUES (?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (endpoint_id, session_key) DO UPDATE SET scope = excluded.scope, device_id = excluded.device_id,
             session_id = excluded.session_id, expires_at = excluded.expires_at, snapshot = excluded.snapshot`,
          [s.endpointId, s.key, s.scope, s.deviceId, s.sessionId, s.expiresAt, JSON.stringify(s.snapshot)],
        );
      }),
    remove: (endpointId, key, fence) =>
      write(fence, async (db) => {
        await db.run('DELETE FROM endpoint_sessions WHERE endpoint_id = ? AND session_key = ?', [endpointId, key]);
      }),
    prune: (before) =>
      wrap(async () => {
        const r = await db.run('DELETE FROM endpoint_sessions WHERE expires_at IS NOT NULL AND expires_at < ?', [
          before,
        ]);
        return r.changes;
      }),
    load: (endpointId) =>
      wrap(async () => {
        const rows = await db.all<Row>('SELECT * FROM endpoint_sessions WHERE endpoint_id = ? ORDER BY session_key', [
          endpointId,
        ]);
        return rows.map((r) => ({
          endpointId: r.endpoint_id,
          key: r.session_key,
          scope: r.scope,
          deviceId: r.device_id,
          sessionId: r.session_id,
          expiresAt: r.expires_at === null ? null : Number(r.expires_at),
          snapshot: JSON.parse(r.snapshot) as Record<string, unknown>,
        }));
      }),
  };
}
