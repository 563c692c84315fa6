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
import {
  assignedEndpoints,
  beatEndpointHost,
  ensureEndpointHosts,
  fairShare,
  handOverEndpoint,
  leaveEndpointHosts,
  liveEndpointHosts,
} from './endpoint-spread.js';

/**
 * `serve` leases its endpoints on a PostgreSQL store unless this is `off` (issue 19; the off switch is kept for one
 * release). A governed call made by a process that does not hold the endpoint is forwarded to its holder.
 */
export const ENDPOINT_LEASES_ENV = 'MHS_ENDPOINT_LEASES';

/** `off`: a process claims every unheld connector it sweeps and hands none over (no fair share). Default on. */
export const ENDPOINT_SPREAD_ENV = 'MHS_ENDPOINT_SPREAD';

/** Lease timing of the endpoints of one host process (ms); the run leases' defaults and environment. */
export interface EndpointLeaseTiming {
  /** How long a renewal keeps a lease (default 15 000); renewed, and unheld connectors swept, every third of it. */
  ttlMs?: number;
  /** Clock difference tolerated between machines before a lapsed lease is taken (default 5 000). */
  skewMs?: number;
  /** Spread the leases over the live processes (fair share, hand-over of idle endpoints); default true. */
  spread?: boolean;
}

/** What the host runtime does when endpoint ownership changes. */
export interface EndpointOwnershipHandlers {
  /** The enabled connectors (read at each sweep). */
  enabled(): Promise<string[]>;
  /** Attaches connectors whose leases this process just took (a first claim or a takeover). */
  claimed(leases: HeldEndpointLease[]): Promise<void>;
  /** Detaches a connector whose lease another process took, or that the fence found lost. */
  lost(connectorId: string): Promise<void>;
  /**
   * Spreading (src/engine/endpoint-spread.ts): the endpoint id of held `connectorId` when it may be handed over now
   * (attached, nothing in its lane, no unsettled command, no forwarded call being applied; its evidence recorded),
   * else undefined. Without it nothing is handed over.
   */
  idle?(connectorId: string): Promise<string | undefined>;
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
  readonly spread: boolean;
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
    this.spread = o.timing?.spread ?? true;
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
    await ensureEndpointHosts(this.db);
    await beatEndpointHost(this.db, this.owner, this.clock.now(), this.ttlMs);
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
      if (renew && !this.closed && this.claiming) await this.rebalance(this.clock.now());
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
      await beatEndpointHost(this.db, this.owner, now, this.ttlMs);
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
    const enabled = await this.handlers.enabled();
    // Handed over to this process by another (its notice, or found here): taken up as claimed.
    const assigned = (await assignedEndpoints(this.db, this.owner, now, new Set(this.held.keys()))).filter((a) =>
      enabled.includes(a.connectorId),
    );
    const live = await liveEndpointHosts(this.db, now, this.skewMs);
    const share = fairShare(enabled.length, live.length);
    const claimed = await claimEndpoints(this.db, this.owner, now, {
      ttlMs: this.ttlMs,
      skewMs: this.skewMs,
      connectorIds: enabled.filter((id) => !assigned.some((a) => a.connectorId === id)),
      held: new Map([...this.held].map(([id, h]) => [id, h.token])),
      // Its fair share while others are live: ceil(enabled / live hosts).
      ...(this.spread ? { limit: share - this.held.size - assigned.length } : {}),
    });
    const taken = [...assigned.map((a) => ({ ...a, previous: null })), ...claimed];
    for (const l of taken) this.held.set(l.connectorId, { token: l.token, expiresAt: now + this.ttlMs });
    if (!taken.length) return;
    // Attaching may take a while (connect, reconcile); renewals must not wait behind it.
    const p = this.own(this.handlers.claimed(taken));
    if (wait) await p;
  }

  /**
   * Hands idle endpoints over while this process holds more than its fair share and a live process holds less, one
   * per tick (the others take them up on the notice): never one with a command in flight, an open approval or a held
   * device gate (checked by the handler and again in the hand-over's transaction).
   */
  private async rebalance(now: number): Promise<void> {
    const idle = this.handlers?.idle;
    if (!idle || !this.spread) return;
    const enabled = (await this.handlers!.enabled()).length;
    const live = await liveEndpointHosts(this.db, now, this.skewMs);
    const share = fairShare(enabled, live.length);
    if (live.length < 2 || this.held.size <= share) return;
    const to = live.filter((h) => h.owner !== this.owner && h.held < share).sort((a, b) => a.held - b.held)[0];
    if (!to) return;
    for (const [connectorId, h] of [...this.held].sort(([a], [b]) => (a < b ? 1 : -1))) {
      const endpointId = await idle(connectorId);
      if (!endpointId || this.held.get(connectorId)?.token !== h.token) continue;
      const token = await handOverEndpoint(this.db, {
        connectorId,
        endpointId,
        owner: this.owner,
        token: h.token,
        to: to.owner,
        nowMs: this.clock.now(),
        ttlMs: this.ttlMs,
      });
      if (token === undefined) continue;
      this.held.delete(connectorId);
      await this.own(this.handlers!.lost(connectorId));
      return;
    }
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
    await leaveEndpointHosts(this.db, this.owner).catch((err: unknown) =>
      this.onError?.(ledgerUnavailable(err, this.db.location, { operation: 'endpoint_host_leave', owner: this.owner })),
    );
    await releaseEndpointLeases(this.db, this.owner, list).catch((err: unknown) =>
      this.onError?.(
        ledgerUnavailable(err, this.db.location, { operation: 'endpoint_lease_release', owner: this.owner }),
      ),
    );
  }
}
