import { ErrorCode, HostError, toHostError } from '../core/index.js';
import type { Clock, TimerHandle } from '../core/index.js';
import { GATE_OWNER, ledgerUnavailable } from '../ledger/index.js';
import type { Db } from '../ledger/index.js';
import {
  checkRunLease,
  claimLapsedRuns,
  endRunLease,
  heartbeatRunHost,
  insertRunLease,
  leaseOf,
  leaseRowsOf,
  liveRunHosts,
  removeRunHost,
  releaseRunLeases,
  renewRunLeases,
  runLeaseLost,
} from './run-leases.js';
import type { HeldLease } from './run-leases.js';
import type { RunFence } from './store.js';

/** Lease timing of the runs of one host process (ms). */
export interface RunLeaseTiming {
  /** How long a renewal keeps a run's lease (default 15 000); renewed, and lapsed runs swept, every third of it. */
  ttlMs?: number;
  /** Clock difference tolerated between machines before a lapsed lease is taken (default 5 000). */
  skewMs?: number;
  /** Most runs taken over in one sweep (default 25), so that several live processes share a dead one's runs. */
  batch?: number;
}

/** Environment variables overriding {@link RunLeaseTiming} for `serve` (tests keep takeovers short with them). */
export const RUN_LEASE_TTL_ENV = 'MHS_RUN_LEASE_TTL_MS';
export const RUN_LEASE_SKEW_ENV = 'MHS_RUN_LEASE_SKEW_MS';

/** The timing named by the environment; `MHS.HOST.CONFIG_INVALID` for a value that is not a whole number of ms. */
export function runLeaseTimingFromEnv(env: Record<string, string | undefined> = process.env): RunLeaseTiming {
  const read = (name: string, min: number): number | undefined => {
    const raw = env[name]?.trim();
    if (!raw) return undefined;
    const n = Number(raw);
    if (/^\d+$/.test(raw) && Number.isSafeInteger(n) && n >= min) return n;
    throw new HostError(
      ErrorCode.HOST_CONFIG_INVALID,
      `${name} must be a whole number of milliseconds >= ${min}`,
      { variable: name, value: raw },
      { remediation: `Unset ${name} or set it to e.g. 15000.` },
    );
  };
  const ttlMs = read(RUN_LEASE_TTL_ENV, 3);
  const skewMs = read(RUN_LEASE_SKEW_ENV, 0);
  return { ...(ttlMs !== undefined ? { ttlMs } : {}), ...(skewMs !== undefined ? { skewMs } : {}) };
}

/** What the run manager does when ownership changes. */
export interface OwnershipHandlers {
  /** Resumes runs whose leases this process just took over, from their logs (as after a restart). */
  claimed(runIds: string[]): Promise<void>;
  /** Stops driving a run whose lease another process took over. */
  lost(runId: string): void;
  /** After each sweep: waits on runs driven elsewhere re-read the store. */
  swept?(): void;
}

/** One held lease as the operator sees it. */
export interface HeldRunLease {
  runId: string;
  token: number;
  expiresAt: number;
}

/**
 * The run leases of this host process on a shared PostgreSQL store (issue 19), and the fence of its appends. One
 * actor: its deadlines (next renewal, next sweep) are data, one timer is armed for the earlier, and every tick it
 * starts is owned (awaited on close). A renewal that finds a lease taken over, or an append the fence refuses,
 * makes the process step down from that run; a sweep takes over lapsed runs and hands them to be resumed.
 */
export class RunOwnership implements RunFence {
  readonly owner: string;
  readonly ttlMs: number;
  readonly skewMs: number;
  private readonly batch: number;
  private readonly held = new Map<string, { token: number; expiresAt: number }>();
  private readonly due = { renewAt: Infinity, sweepAt: Infinity };
  private timer: TimerHandle | null = null;
  private ticking: Promise<void> = Promise.resolve();
  private readonly resuming = new Set<Promise<void>>();
  private handlers: OwnershipHandlers | undefined;
  private claiming = false;
  private closed = false;
  /**
   * Tells the process a new run was handed to (a `NOTIFY` in the insert's transaction); set on a store with a listen
   * connection. Without it every new run stays with the process that accepted it.
   */
  handOff: ((t: Db, runId: string, to: string) => Promise<void>) | undefined;
  private readonly onError: ((err: HostError) => void) | undefined;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    o: { owner?: string; timing?: RunLeaseTiming; onError?: (err: HostError) => void } = {},
  ) {
    this.owner = o.owner ?? GATE_OWNER;
    this.ttlMs = o.timing?.ttlMs ?? 15_000;
    this.skewMs = o.timing?.skewMs ?? 5_000;
    this.batch = o.timing?.batch ?? 25;
    this.onError = o.onError;
  }

  /** The leases this process holds now. */
  leases(): HeldRunLease[] {
    return [...this.held].map(([runId, h]) => ({ runId, token: h.token, expiresAt: h.expiresAt }));
  }

  /** Whether this process holds `runId`'s lease. */
  holds(runId: string): boolean {
    return this.held.has(runId);
  }

  async claim(t: Db, runId: string, o: { spread?: boolean } = {}): Promise<boolean> {
    const now = this.clock.now();
    const to = o.spread && this.handOff ? await this.target(t, now) : this.owner;
    await insertRunLease(t, runId, to, now, this.ttlMs);
    if (to !== this.owner) {
      await this.handOff!(t, runId, to);
      return false;
    }
    this.held.set(runId, { token: 1, expiresAt: now + this.ttlMs });
    return true;
  }

  /**
   * Who drives a new run (issue 19): the least loaded live process (fewest leases), unless this one has at most one
   * run more than it (a new run stays where it was accepted when the load is even). Ties go to the first by id.
   */
  private async target(t: Db, now: number): Promise<string> {
    const hosts = await liveRunHosts(t, now);
    const least = hosts[0];
    const mine = hosts.find((h) => h.owner === this.owner)?.load ?? this.held.size;
    return least && least.owner !== this.owner && least.load + 1 < mine ? least.owner : this.owner;
  }

  /**
   * Takes up a new run another process handed to this one (its lease row names this process, token 1): true when
   * this process now holds it and is to start it.
   */
  async adopt(runId: string): Promise<boolean> {
    if (this.closed || this.held.has(runId)) return false;
    const row = await leaseOf(this.db, runId, this.owner);
    if (!row) return false;
    this.held.set(runId, { token: row.token, expiresAt: row.expires_at_ms });
    return true;
  }

  async check(t: Db, runId: string): Promise<void> {
    const h = this.held.get(runId);
    if (!h) throw runLeaseLost(runId, this.owner, 0);
    try {
      await checkRunLease(t, runId, this.owner, h.token);
    } catch (err) {
      if (err instanceof HostError && err.code === ErrorCode.HOST_RUN_LEASE_LOST) this.held.delete(runId);
      throw err;
    }
  }

  async end(t: Db, runId: string): Promise<void> {
    const h = this.held.get(runId);
    if (!h) return;
    await endRunLease(t, runId, h.token);
    // Should the transaction still roll back, the row lapses unrenewed and a sweep (this one's too) resumes the run.
    this.held.delete(runId);
  }

  /** Drops a run that ended here (its row went with its terminal event). */
  forget(runId: string): void {
    this.held.delete(runId);
  }

  /**
   * Takes over the runs that lapsed (a dead owner's, or runs stored before leases) and resumes them before it
   * returns, then keeps renewing and sweeping. Returns the run ids taken now.
   */
  async start(handlers: OwnershipHandlers): Promise<string[]> {
    this.handlers = handlers;
    this.claiming = true;
    const now = this.clock.now();
    this.due.renewAt = now + this.period();
    await heartbeatRunHost(this.db, this.owner, now, this.ttlMs);
    const taken = await this.sweep(now, true);
    this.arm();
    return taken;
  }

  private period(): number {
    return Math.max(1, Math.floor(this.ttlMs / 3));
  }

  private arm(): void {
    if (this.closed) return;
    if (this.timer) this.clock.clearTimeout(this.timer);
    const next = Math.min(this.due.renewAt, this.due.sweepAt);
    this.timer = this.clock.setTimeout(
      () => {
        this.timer = null;
        this.ticking = this.tick();
      },
      Math.max(0, next - this.clock.now()),
    );
  }

  /** One tick: renew when due, then sweep when due; never rejects (failures are reported), re-arms itself. */
  private async tick(): Promise<void> {
    const now = this.clock.now();
    try {
      if (now >= this.due.renewAt) await this.renew(now);
      if (now >= this.due.sweepAt && this.claiming) await this.sweep(now, false);
    } catch (err) {
      this.onError?.(toHostError(err));
    } finally {
      this.arm();
    }
  }

  private async renew(now: number): Promise<void> {
    this.due.renewAt = now + this.period();
    const list: HeldLease[] = [...this.held].map(([runId, h]) => ({ runId, token: h.token }));
    let renewed: Set<string> | undefined;
    try {
      // This process counts as live (new runs may be handed to it) as long as it renews.
      await heartbeatRunHost(this.db, this.owner, now, this.ttlMs);
      renewed = await renewRunLeases(this.db, this.owner, list, now, this.ttlMs);
    } catch (err) {
      this.onError?.(ledgerUnavailable(err, this.db.location, { operation: 'run_lease_renewal', owner: this.owner }));
    }
    // A lease this process inserted in a run-creating transaction not yet committed has no visible row, and one
    // committed just after the UPDATE is its own: the renewal missed both, but neither is lost. Only a row another
    // owner (or a later token) holds is.
    const missed = renewed ? list.filter((l) => !renewed.has(l.runId)).map((l) => l.runId) : [];
    let rows: Map<string, { owner: string; token: number }> | undefined;
    try {
      rows = missed.length ? await leaseRowsOf(this.db, missed) : new Map();
    } catch (err) {
      this.onError?.(ledgerUnavailable(err, this.db.location, { operation: 'run_lease_renewal', owner: this.owner }));
    }
    const takenElsewhere = (runId: string, token: number): boolean => {
      const row = rows?.get(runId);
      return row !== undefined && (row.owner !== this.owner || row.token !== token);
    };
    for (const { runId, token } of list) {
      const h = this.held.get(runId);
      if (!h || h.token !== token) continue;
      if (renewed?.has(runId)) h.expiresAt = now + this.ttlMs;
      // Taken over, or not renewed in time (another process may take it now): stop driving it.
      else if (takenElsewhere(runId, token) || h.expiresAt <= now) this.lose(runId);
    }
  }

  private lose(runId: string): void {
    this.held.delete(runId);
    this.handlers?.lost(runId);
  }

  private async sweep(now: number, wait: boolean): Promise<string[]> {
    this.due.sweepAt = now + this.period();
    // Read live, after the claim's SELECT: a run this process created while the sweep was starting is its own.
    const held = { get: (runId: string) => this.held.get(runId)?.token };
    const taken = await claimLapsedRuns(this.db, this.owner, now, {
      ttlMs: this.ttlMs,
      skewMs: this.skewMs,
      limit: this.batch,
      held,
    });
    for (const l of taken) this.held.set(l.runId, { token: l.token, expiresAt: now + this.ttlMs });
    const ids = taken.map((l) => l.runId);
    if (ids.length && this.handlers) {
      // Resuming may take a while (each run folds its log); renewals must not wait behind it.
      const p = this.handlers.claimed(ids).catch((err: unknown) => this.onError?.(toHostError(err)));
      this.resuming.add(p);
      void p.finally(() => this.resuming.delete(p));
      if (wait) await p;
    }
    this.handlers?.swept?.();
    return ids;
  }

  /** Stops taking over runs (shutdown begins); held leases are still renewed while the actors halt. */
  stopClaiming(): void {
    this.claiming = false;
  }

  /** Stops renewing and lets every held lease go at once, so other processes take the runs at their next sweep. */
  async close(): Promise<void> {
    this.claiming = false;
    this.closed = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
    await this.ticking;
    await Promise.all(this.resuming);
    const list = [...this.held].map(([runId, h]) => ({ runId, token: h.token }));
    this.held.clear();
    await releaseRunLeases(this.db, this.owner, list)
      .then(() => removeRunHost(this.db, this.owner))
      .catch((err: unknown) =>
        this.onError?.(ledgerUnavailable(err, this.db.location, { operation: 'run_lease_release', owner: this.owner })),
      );
  }
}
