import { ErrorCode, HostError, toHostError } from '../core/index.js';
import type { Clock, TimerHandle } from '../core/index.js';
import { GATE_OWNER, ledgerUnavailable } from '../ledger/index.js';
import type { Db } from '../ledger/index.js';
import {
  checkEndpointLease,
  claimEndpoints,
  endpointLeaseLost,
  ensureEndpointLeases,
  releaseEndpointLeases,
  renewEndpointLeases,
} from './endpoint-leases.js';
import type { HeldEndpointLease } from './endpoint-leases.js';

/**
 * `serve` leases its endpoints on a PostgreSQL store unless this is `off` (issue 19; the off switch is kept for one
 * release). A governed call made by a process that does not hold the endpoint is forwarded to its holder.
 */
export const ENDPOINT_LEASES_ENV = 'MHS_ENDPOINT_LEASES';

/** Lease timing of the endpoints of one host process (ms); the run leases' defaults and environment. */
export interface EndpointLeaseTiming {
  /** How long a renewal keeps a lease (default 15 000); renewed, and unheld connectors swept, every third of it. */
  ttlMs?: number;
  /** Clock difference tolerated between machines before a lapsed lease is taken (default 5 000). */
  skewMs?: number;
}

/** What the host runtime does when endpoint ownership changes. */
export interface EndpointOwnershipHandlers {
  /** The enabled connectors (read at each sweep). */
  enabled(): Promise<string[]>;
  /** Attaches connectors whose leases this process just took (a first claim or a takeover). */
  claimed(leases: HeldEndpointLease[]): Promise<void>;
  /** Detaches a connector whose lease another process took, or that the fence found lost. */
  lost(connectorId: string): Promise<void>;
}

/**
 * The endpoint leases of this host process on a shared PostgreSQL store (issue 19): each enabled connector is
 * attached (MCP connection, sessions, heartbeats, evidence capture) by the one process holding its lease. One actor:
 * one timer for the next renewal-and-sweep, every tick owned (awaited on close). A renewal that finds a lease taken
 * over, or a fenced append refused, detaches the endpoint here.
 */
export class EndpointOwnership {
  readonly owner: string;
  readonly ttlMs: number;
  readonly skewMs: number;
  private readonly held = new Map<string, { token: number; expiresAt: number }>();
  private timer: TimerHandle | null = null;
  private ticking: Promise<void> = Promise.resolve();
  private readonly work = new Set<Promise<void>>();
  private handlers: EndpointOwnershipHandlers | undefined;
  private closed = false;
  private claiming = true;
  private readonly onError: ((err: HostError) => void) | undefined;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    o: { owner?: string; timing?: EndpointLeaseTiming; onError?: (err: HostError) => void } = {},
  ) {
    this.owner = o.owner ?? GATE_OWNER;
    this.ttlMs = o.timing?.ttlMs ?? 15_000;
    this.skewMs = o.timing?.skewMs ?? 5_000;
    this.onError = o.onError;
  }

  /** Whether this process holds `connectorId`'s lease (may attach it). */
  holds(connectorId: string): boolean {
    return this.held.has(connectorId);
  }

  /** The token of a held lease, or undefined. */
  tokenOf(connectorId: string): number | undefined {
    return this.held.get(connectorId)?.token;
  }

  /** The leases held now (operator view, tests). */
  leases(): Array<{ connectorId: string; token: number; expiresAt: number }> {
    return [...this.held].map(([connectorId, h]) => ({ connectorId, token: h.token, expiresAt: h.expiresAt }));
  }

  /**
   * The fence of `connectorId`'s side effects, for the ledger's `fence` append option: refuses with
   * `MHS.HOST.ENDPOINT_LEASE_LOST` unless this process still holds the lease with its token, and then detaches it.
   */
  fenceFor(connectorId: string): (t: Db) => Promise<void> {
    return async (t) => {
      const h = this.held.get(connectorId);
      if (!h) throw endpointLeaseLost(connectorId, this.owner, 0);
      try {
        await checkEndpointLease(t, connectorId, this.owner, h.token);
      } catch (err) {
        if (err instanceof HostError && err.code === ErrorCode.HOST_ENDPOINT_LEASE_LOST)
          this.lose(connectorId, h.token, 'fence', err);
        throw err;
      }
    };
  }

  /** Creates the table, claims what it can and attaches it before it returns, then keeps renewing and sweeping. */
  async start(handlers: EndpointOwnershipHandlers): Promise<void> {
    this.handlers = handlers;
    await ensureEndpointLeases(this.db);
    await this.sweep(this.clock.now(), true);
    this.arm();
  }

  /** Sweeps now (a connector was just enabled) instead of at the next tick. */
  sweepSoon(): void {
    void this.sweepNow(); // owned: `ticking`, awaited by close(); never rejects
  }

  /**
   * Sweeps now, after the tick under way, and resolves once the connectors it claimed are attached (a call that
   * needs an endpoint this process may take over waits for it).
   */
  async sweepNow(): Promise<void> {
    if (this.closed) return;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
    const previous = this.ticking;
    this.ticking = previous.then(() => this.tick(false));
    await this.ticking;
    await Promise.all(this.work);
  }

  private period(): number {
    return Math.max(1, Math.floor(this.ttlMs / 3));
  }

  private arm(): void {
    if (this.closed) return;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      this.ticking = this.tick(true);
    }, this.period());
  }

  /** Renews (when `renew`), then sweeps; never rejects (failures are reported), re-arms itself. */
  private async tick(renew: boolean): Promise<void> {
    const now = this.clock.now();
    try {
      if (renew) await this.renew(now);
      if (!this.closed) await this.sweep(now, false);
    } catch (err) {
      this.onError?.(toHostError(err));
    } finally {
      this.arm();
    }
  }

  private async renew(now: number): Promise<void> {
    const list = [...this.held].map(([connectorId, h]) => ({ connectorId, token: h.token }));
    let renewed: Set<string> | undefined;
    try {
      renewed = await renewEndpointLeases(this.db, this.owner, list, now, this.ttlMs);
    } catch (err) {
      this.onError?.(
        ledgerUnavailable(err, this.db.location, { operation: 'endpoint_lease_renewal', owner: this.owner }),
      );
    }
    for (const { connectorId, token } of list) {
      const h = this.held.get(connectorId);
      if (!h || h.token !== token) continue;
      if (renewed?.has(connectorId)) h.expiresAt = now + this.ttlMs;
      // Taken over, or not renewed in time (another process may take it now): detach it.
      else if (renewed || h.expiresAt <= now) this.lose(connectorId, token, 'renewal');
    }
  }

  /** Stops attaching a connector and says so (the log shows which check found it: a renewal or the fence). */
  private lose(connectorId: string, token: number, detectedBy: 'renewal' | 'fence', cause?: HostError): void {
    if (this.held.get(connectorId)?.token !== token) return;
    this.held.delete(connectorId);
    const e = cause ?? endpointLeaseLost(connectorId, this.owner, token);
    this.onError?.(
      new HostError(
        e.code,
        `connector ${connectorId}: ${e.message}; this process detaches it`,
        { ...e.details, detectedBy },
        { remediation: 'Nothing to do: the process holding the endpoint lease attaches it.' },
      ),
    );
    if (this.handlers) this.own(this.handlers.lost(connectorId));
  }

  private own(p: Promise<void>): Promise<void> {
    const q = p.catch((err: unknown) => this.onError?.(toHostError(err)));
    this.work.add(q);
    void q.finally(() => this.work.delete(q));
    return q;
  }

  private async sweep(now: number, wait: boolean): Promise<void> {
    if (!this.handlers || !this.claiming) return;
    const taken = await claimEndpoints(this.db, this.owner, now, {
      ttlMs: this.ttlMs,
      skewMs: this.skewMs,
      connectorIds: await this.handlers.enabled(),
      held: new Map([...this.held].map(([id, h]) => [id, h.token])),
    });
    for (const l of taken) this.held.set(l.connectorId, { token: l.token, expiresAt: now + this.ttlMs });
    if (!taken.length) return;
    // Attaching may take a while (connect, reconcile); renewals must not wait behind it.
    const p = this.own(this.handlers.claimed(taken));
    if (wait) await p;
  }

  /** Claims nothing more (shutdown begins); held leases are still renewed until {@link close}. */
  stopClaiming(): void {
    this.claiming = false;
  }

  /** Stops renewing and lets every held lease go at once, so other processes claim them at their next sweep. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
    await this.ticking;
    await Promise.all(this.work);
    const list = [...this.held].map(([connectorId, h]) => ({ connectorId, token: h.token }));
    this.held.clear();
    await releaseEndpointLeases(this.db, this.owner, list).catch((err: unknown) =>
      this.onError?.(
        ledgerUnavailable(err, this.db.location, { operation: 'endpoint_lease_release', owner: this.owner }),
      ),
    );
  }
}
