import { isoAt } from '../core/index.js';
import type { Clock, TimerHandle } from '../core/index.js';
import type { Db } from './db.js';
import { ownerAlive } from './device-gates.js';

/**
 * One row per host process that has held a device gate in this store: how long the others may take it to be
 * running. Not append-only; renewed in place.
 */
export const HOST_LEASES_DDL = `CREATE TABLE host_leases (
  owner TEXT PRIMARY KEY,
  started_at TEXT NOT NULL,
  renewed_at TEXT NOT NULL,
  expires_at_ms BIGINT NOT NULL,
  ended_at TEXT
);`;

/** Lease timing of a host process (ms). */
export interface LeaseTiming {
  /** How long a renewal keeps the process counted as running (default 30 000; renewed every third of it). */
  ttlMs?: number;
  /** Clock difference tolerated between machines before an expired lease counts as gone (default 5 000). */
  skewMs?: number;
}

const DEFAULT_TTL_MS = 30_000;
const DEFAULT_SKEW_MS = 5_000;

/**
 * Whether the host process `owner` (`hostname:pid`) is running, as far as this store can tell (HOST-091): a process
 * on this machine is checked by its pid; one on another machine (a shared PostgreSQL store) by its lease: running
 * while renewed, gone once it ended or lapsed by more than the skew. Null when it never held a lease here (a host
 * that predates leases): nobody can tell.
 */
export async function ownerStatus(db: Db, owner: string, nowMs: number, skewMs?: number): Promise<boolean | null> {
  const local = ownerAlive(owner);
  if (local !== null) return local;
  const row = await db.get<{ expires_at_ms: number | string; ended_at: string | null }>(
    'SELECT expires_at_ms, ended_at FROM host_leases WHERE owner = ?',
    [owner],
  );
  if (!row) return null;
  if (row.ended_at) return false;
  return nowMs <= Number(row.expires_at_ms) + (skewMs ?? DEFAULT_SKEW_MS);
}

/**
 * The lease of this host process: renewed on the injected clock while the process may hold device gates, ended
 * when it shuts down cleanly. A failed renewal is reported and retried at the next tick; if it keeps failing the
 * lease lapses and other hosts take over this process's gates, reconciling its commands by their ids, which
 * the endpoint answers from retention (wire contract §5): nothing executes twice.
 */
export class HostLease {
  private timer: TimerHandle | null = null;
  private started = false;
  private renewing: Promise<void> = Promise.resolve();
  private readonly ttlMs: number;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    readonly owner: string,
    timing: LeaseTiming = {},
    private readonly onError?: (err: unknown) => void,
  ) {
    this.ttlMs = timing.ttlMs ?? DEFAULT_TTL_MS;
  }

  /** Whether {@link hold} was called and the lease not released since. */
  get held(): boolean {
    return this.started;
  }

  /**
   * Takes (or renews) the lease now and keeps renewing it; idempotent. `via` is the handle of a transaction the
   * caller holds (the first write then joins it instead of waiting for the store behind it).
   */
  async hold(via: Db = this.db): Promise<void> {
    if (this.started) return this.renewing;
    this.started = true;
    this.renewing = this.renew(via);
    await this.renewing.catch((err: unknown) => {
      this.started = false;
      throw err;
    });
  }

  private async renew(via: Db = this.db): Promise<void> {
    const now = this.clock.now();
    await via.run(
      `INSERT INTO host_leases (owner, started_at, renewed_at, expires_at_ms, ended_at) VALUES (?, ?, ?, ?, NULL)
       ON CONFLICT (owner) DO UPDATE SET renewed_at = excluded.renewed_at, expires_at_ms = excluded.expires_at_ms, ended_at = NULL`,
      [this.owner, isoAt(now), isoAt(now), now + this.ttlMs],
    );
    this.schedule();
  }

  private schedule(): void {
    if (!this.started) return;
    this.timer = this.clock.setTimeout(
      () => {
        this.timer = null;
        this.renewing = this.renew().catch((err: unknown) => {
          this.schedule();
          this.onError?.(err);
        });
      },
      Math.max(1, Math.floor(this.ttlMs / 3)),
    );
  }

  /** Stops renewing. With `end`, records that the process is gone, so others need not wait for the lease to lapse. */
  async release(end = true): Promise<void> {
    const was = this.started;
    this.started = false;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
    // A renewal under way must not undo the end.
    await this.renewing.catch(() => undefined);
    if (was && end)
      await this.db.run('UPDATE host_leases SET ended_at = ? WHERE owner = ?', [isoAt(this.clock.now()), this.owner]);
  }
}
