import { ErrorCode, HostError, toHostError } from '../core/index.js';
import type { Clock, TimerHandle } from '../core/index.js';
import { ownerAlive } from '../ledger/index.js';
import type { Db, Ledger, PgListener } from '../ledger/index.js';
import type { Receipt } from '../mhs/wire-types.js';
import type { InvokeRequest, InvokeResult } from './call-types.js';
import type { SessionDisclosure } from './session-disclosure.js';
import { relayDisclosure, showForHolder, storedError } from './forward-disclosure.js';
import { recordWithdrawn, withdrawnError } from './forward-withdrawal.js';
import { SenderApprovals, announceApprovals } from './forward-approvals.js';
import type { ApprovalRelayDeps } from './forward-approvals.js';
import type { EndpointOwnership } from './endpoint-ownership.js';
import {
  ENDPOINT_REQUESTS_CHANNEL,
  EndpointRequests,
  ensureEndpointRequests,
  fromForwardedCall,
  toForwardedCall,
} from './endpoint-requests.js';
import type { EndpointRequest, ForwardedOp, ForwardedOpOther } from './endpoint-requests.js';
import type { Engine } from './engine.js';
import type { SafetyActions } from '../policy/estop.js';

/** The default `deadline_ms` a forwarded call is awaited for when the caller names none (the holder knows the binding's). */
export const FORWARD_DEFAULT_DEADLINE_MS = 30_000;
/** Added to the deadline (and the transport margin) before a waiting sender gives up. */
export const FORWARD_SLACK_MS = 5_000;

type Listen = (channel: string, onNotify: (payload: string) => void) => Promise<PgListener>;

/** What the result row holds: an `InvokeResult` without its promise (the receipt entry's seq instead). */
interface StoredResult {
  commandId: string;
  outcome: InvokeResult['outcome'];
  receipt: Receipt;
  traceparent: string;
  intentSeq: number;
  receiptSeq: number | null;
  disclosure?: InvokeResult['disclosure'];
}

/** Options of {@link EndpointForwarding}. */
export interface EndpointForwardingOptions {
  db: Db;
  clock: Clock;
  ledger: Ledger;
  ownership: EndpointOwnership;
  /**
   * The engine (set once created): its `invoke` runs a claimed call here, `reconcile` settles an adopted one, and the
   * attached `endpoint` runs any other operation.
   */
  engine: () => Pick<Engine, 'invoke' | 'reconcile' | 'endpoint'>;
  /** The enabled connector of an endpoint id, if any. */
  connectorOf: (endpointId: string) => Promise<string | undefined>;
  transportMarginMs?: number;
  /**
   * How often a holder re-reads the calls it is applying, to see a withdrawal or cancel whose notice it missed (its
   * listen connection down): the approval poll's interval (`MHS_APPROVAL_POLL_MS`), default 2 s.
   */
  pollMs?: number;
  /**
   * Voids an approval a forwarded call was waiting for when its sender withdrew the call (recorded `approval`/`voided`
   * with `reason`), so it can no longer be granted for a call that will not be made.
   */
  voidApproval?: (approvalId: string, reason: string) => Promise<unknown>;
  /**
   * This process's operator events and approvals: a holder announces the approvals it asks for a forwarded call, and
   * its sender raises them here, so its run shows the wait (`waiting-approval`) as for a local call.
   */
  approvals?: Omit<ApprovalRelayDeps, 'onError'>;
  /** This process's own trusted e-stop and reset (not forwarded): what a holder runs for a forwarded one. */
  safety?: () => Pick<SafetyActions, 'estop' | 'reset'>;
  onError?: (err: HostError) => void;
}

function opName(op: ForwardedOpOther): string {
  if (op.kind === 'tool') return op.name;
  if (op.kind === 'closeScope') return 'session close';
  return op.kind === 'safety' ? op.action : 'reconcile';
}

function resultOf(r: StoredResult): InvokeResult {
  return {
    commandId: r.commandId,
    outcome: r.outcome,
    receipt: r.receipt,
    traceparent: r.traceparent,
    intentSeq: r.intentSeq,
    recorded: Promise.resolve(r.receiptSeq ?? r.intentSeq),
    ...(r.disclosure ? { disclosure: r.disclosure } : {}),
  };
}

/**
 * Governed calls to endpoints another live host process holds (issue 19, `endpoint_requests`): a sender stores the
 * call and waits; the holder claims it in the transaction of its intent (once), runs it through its own governed path
 * and stores the outcome. A sender whose holder is gone takes the lease over: a call not claimed yet is withdrawn and
 * made here, a claimed one is reconciled by its command id (never resent).
 */
export class EndpointForwarding {
  readonly requests: EndpointRequests;
  private listener: PgListener | undefined;
  private timer: TimerHandle | null = null;
  private closed = false;
  private readonly waiters = new Map<string, () => void>();
  /** The requests being applied here, with their connector (an endpoint busy with one is not handed over). */
  private readonly applying = new Map<string, string>();
  /**
   * The calls applied here, by request: a withdrawal or cancel by their sender (its notice, or the store at each
   * {@link watchWithdrawals} tick) aborts the call as its caller's abort would here.
   */
  private readonly withdrawals = new Map<string, AbortController>();
  /** The approval waits of the calls applied here, by request: ended when their sender's caller stops waiting. */
  private readonly approvalWaits = new Map<string, AbortController>();
  /** Disclosures handed to senders, by request: their answer (notice `a`) wakes the wait. */
  private readonly relays = new Map<string, () => void>();
  /** The approvals of the calls this process forwarded, by request: fed by the holder's notices (`p`). */
  private readonly approvalsOf = new Map<string, SenderApprovals>();
  private watch: TimerHandle | null = null;
  /** Requests this process stored and still waits for: on a takeover it withdraws and makes them itself. */
  private readonly sending = new Set<string>();
  private readonly work = new Set<Promise<void>>();

  constructor(private readonly o: EndpointForwardingOptions) {
    this.requests = new EndpointRequests(o.db, o.clock, o.ownership.owner);
  }

  private period(): number {
    return Math.max(1, Math.floor(this.o.ownership.ttlMs / 3));
  }

  /** Creates the table and listens; calls stored while no notice arrived are applied at each tick. */
  async start(): Promise<void> {
    await ensureEndpointRequests(this.o.db);
    const listen = (this.o.db as Partial<{ listen: Listen }>).listen;
    if (listen)
      this.listener = await listen
        .call(this.o.db, ENDPOINT_REQUESTS_CHANNEL, (p) => this.onNotice(p))
        .catch((err: unknown) => {
          this.o.onError?.(toHostError(err, ErrorCode.HOST_LEDGER_UNAVAILABLE));
          return undefined;
        });
    this.arm();
  }

  private arm(): void {
    if (this.closed) return;
    this.timer = this.o.clock.setTimeout(() => {
      this.timer = null;
      this.applyHeld();
      for (const wake of this.waiters.values()) wake();
      this.arm();
    }, this.period());
  }

  private onNotice(payload: string): void {
    let n: { k?: string; c?: string; id?: string; a?: unknown; to?: unknown };
    try {
      n = JSON.parse(payload) as typeof n;
    } catch {
      return;
    }
    if ((n.k === 'd' || n.k === 's') && n.id) this.waiters.get(n.id)?.();
    else if (n.k === 'w' && n.id) this.withdrawals.get(n.id)?.abort();
    else if (n.k === 'e' && n.id) this.approvalWaits.get(n.id)?.abort();
    else if (n.k === 'a' && n.id) this.relays.get(n.id)?.();
    else if (n.k === 'p' && n.id && typeof n.a === 'string') {
      this.approvalsOf.get(n.id)?.noted(n.a);
      this.waiters.get(n.id)?.();
    } else if (n.k === 'q' && n.c && this.o.ownership.holds(n.c)) this.applyHeld([n.c]);
    else if (n.k === 'h' && n.to === this.o.ownership.owner) this.o.ownership.sweepSoon();
  }

  /** Applies the pending calls of the connectors held here (or of `connectorIds`), each once, concurrently. */
  applyHeld(connectorIds?: string[]): void {
    if (this.closed) return;
    const ids = connectorIds ?? this.o.ownership.leases().map((l) => l.connectorId);
    this.own(
      this.requests.pending(ids).then((reqs) => {
        for (const r of reqs) {
          if (this.applying.has(r.requestId) || this.sending.has(r.requestId)) continue;
          if (!this.o.ownership.holds(r.connectorId)) continue;
          this.applying.set(r.requestId, r.connectorId);
          this.own(this.apply(r).finally(() => this.applying.delete(r.requestId)));
        }
      }),
    );
  }

  private own(p: Promise<void>): void {
    const q = p.catch((err: unknown) => this.o.onError?.(toHostError(err)));
    this.work.add(q);
    void q.finally(() => this.work.delete(q));
  }

  /** The holder: runs a stored operation once (a governed call, a tool call, the end of a session scope). */
  private apply(req: EndpointRequest): Promise<void> {
    return req.op.kind === 'invoke'
      ? this.applyCall(req, req.op).finally(() => {
          this.withdrawals.delete(req.requestId);
          this.approvalWaits.delete(req.requestId);
        })
      : this.applyOp(req, req.op);
  }

  /** An operation that journals no intent: claimed first, then run on the attached endpoint, its result stored. */
  private async applyOp(req: EndpointRequest, op: ForwardedOpOther): Promise<void> {
    // Still attaching what it just claimed: the request stays pending until the attach applies it.
    const ep = this.o.engine().endpoint(req.endpointId);
    if (!ep || !(await this.requests.claim(req.requestId))) return;
    let result: unknown = null;
    try {
      if (op.kind === 'tool')
        result = await ep.callTool(op.name, op.args, {
          ...(op.timeoutMs !== undefined ? { timeoutMs: op.timeoutMs } : {}),
          ...(op.meta ? { meta: op.meta } : {}),
        });
      else if (op.kind === 'closeScope') await ep.closeSessionScope(op.scope);
      else if (op.kind === 'safety') {
        // The holder's own trusted stop (its operator route, its ledger pair), as if the operator had asked it.
        const safety = this.o.safety?.();
        if (!safety) throw new HostError(ErrorCode.NOT_FOUND, 'this host process has no trusted e-stop');
        result = await safety[op.action](req.endpointId, op.deviceId, op.operator);
      } else
        result = await this.o.engine().reconcile({
          endpointId: req.endpointId,
          ...(op.commandId ? { commandId: op.commandId } : {}),
          ...(op.deviceId ? { deviceId: op.deviceId } : {}),
          ...(op.untilSettled ? { untilSettled: true } : {}),
        });
    } catch (err) {
      const e = toHostError(err);
      await this.requests.settle(req.requestId, 'failed', { code: e.code, message: e.message, details: e.details });
      return;
    }
    await this.requests.settle(req.requestId, 'applied', result);
  }

  /**
   * A holder that missed a withdrawal notice (its listen connection down) sees it in the store within `pollMs`, so a
   * withdrawn call's approval is voided, and a cancelled call aborted, without waiting out its timeout.
   */
  private watchWithdrawals(): void {
    if (this.closed || this.watch || this.withdrawals.size === 0) return;
    this.watch = this.o.clock.setTimeout(() => {
      this.watch = null;
      this.own(
        this.requests
          .withdrawnAmong([...this.withdrawals.keys()])
          .then(({ withdrawn, approvalWait }) => {
            for (const id of withdrawn) this.withdrawals.get(id)?.abort();
            for (const id of approvalWait) this.approvalWaits.get(id)?.abort();
          })
          .finally(() => this.watchWithdrawals()),
      );
    }, this.o.pollMs ?? 2_000);
  }

  /** A governed call: the same as a local one, its intent claiming the row (so it is sent at most once). */
  private async applyCall(req: EndpointRequest, op: Extract<ForwardedOp, { kind: 'invoke' }>): Promise<void> {
    let res: InvokeResult;
    // The sender's caller gave up: before the claim the call is withdrawn (its approval wait ends, its claim fails);
    // after it, the call is aborted exactly as a local caller's abort aborts it.
    const withdrawn = new AbortController();
    const approvalWait = new AbortController();
    this.withdrawals.set(req.requestId, withdrawn);
    this.approvalWaits.set(req.requestId, approvalWait);
    this.watchWithdrawals();
    const call = fromForwardedCall(op.call);
    const relayed = op.call.disclosure?.relayed;
    const unannounce = this.o.approvals
      ? announceApprovals(
          { events: this.o.approvals.events, ...(this.o.onError ? { onError: this.o.onError } : {}) },
          call,
          (id) => this.requests.announceApproval(req.requestId, id),
        )
      : undefined;
    try {
      res = await this.o.engine().invoke({
        ...call,
        ...(relayed
          ? {
              disclosure: {
                surface: op.call.disclosure!.surface,
                show: (d: SessionDisclosure) =>
                  relayDisclosure(
                    {
                      requests: this.requests,
                      clock: this.o.clock,
                      pollMs: this.o.pollMs ?? 2_000,
                      relays: this.relays,
                      closed: () => this.closed,
                    },
                    req,
                    d,
                    withdrawn.signal,
                    this.waitLimitMs(op.call.deadlineMs),
                  ),
              },
            }
          : {}),
        intentFence: this.requests.claimFence(req),
        signal: withdrawn.signal,
        approvalSignal: AbortSignal.any([withdrawn.signal, approvalWait.signal]),
      });
    } catch (err) {
      unannounce?.();
      const e = toHostError(err);
      // Withdrawn while it waited for a human: its approval is voided, never granted for a call nobody makes. (One
      // granted after the withdrawal fails the claim above and is recorded approved, not executed.)
      const approvalId = e.details.approval_id;
      if (withdrawn.signal.aborted && e.code === ErrorCode.HOST_APPROVAL_REQUIRED && typeof approvalId === 'string') {
        await this.o.voidApproval?.(approvalId, 'forward_withdrawn');
        return;
      }
      // Withdrawn, or this process no longer holds the endpoint / cannot write: nothing was sent; another holder
      // (or the sender) takes it from here.
      if (e.code === ErrorCode.CONFLICT && e.details.requestId === req.requestId) return;
      if (e.code === ErrorCode.HOST_ENDPOINT_LEASE_LOST || e.code === ErrorCode.HOST_LEDGER_UNAVAILABLE) {
        const now = await this.requests.get(req.requestId);
        if (now?.status === 'pending') return;
      }
      await this.requests.settle(req.requestId, 'failed', { code: e.code, message: e.message, details: e.details });
      return;
    }
    unannounce?.();
    const receiptSeq = await Promise.resolve(res.recorded).catch(() => null);
    const stored: StoredResult = {
      commandId: res.commandId,
      outcome: res.outcome,
      receipt: res.receipt,
      traceparent: res.traceparent,
      intentSeq: res.intentSeq,
      receiptSeq,
      ...(res.disclosure ? { disclosure: res.disclosure } : {}),
    };
    await this.requests.settle(req.requestId, 'applied', stored);
  }

  /** How long a sender waits for a governed call, and a holder for its sender's answer to a disclosure. */
  private waitLimitMs(deadlineMs: number | undefined): number {
    return (deadlineMs ?? FORWARD_DEFAULT_DEADLINE_MS) + (this.o.transportMarginMs ?? 2_000) + FORWARD_SLACK_MS;
  }

  /**
   * The sender: forwards `req` when another process holds its endpoint's lease, and returns its outcome; undefined
   * when the call should be made here (the endpoint has no lease elsewhere, or this process just took it over before
   * the call was claimed).
   */
  async forward(req: InvokeRequest): Promise<InvokeResult | undefined> {
    if (this.closed || req.intentFence) return undefined;
    const connectorId = await this.o.connectorOf(req.endpointId);
    if (!connectorId || this.o.ownership.holds(connectorId)) return undefined;
    const holder = await this.holderOf(connectorId);
    if (!holder || holder.owner === this.o.ownership.owner) return undefined;
    const requestId = await this.requests.store(
      connectorId,
      req.endpointId,
      { kind: 'invoke', call: toForwardedCall(req) },
      req.runFence,
    );
    this.sending.add(requestId);
    const approvals = this.o.approvals
      ? new SenderApprovals({ ...this.o.approvals, ...(this.o.onError ? { onError: this.o.onError } : {}) }, req)
      : undefined;
    if (approvals) this.approvalsOf.set(requestId, approvals);
    try {
      return await this.awaitCall(requestId, connectorId, holder.owner, req, approvals);
    } finally {
      this.sending.delete(requestId);
      this.approvalsOf.delete(requestId);
      // The decision (and its use) is raised before the caller hears the outcome, as a local gate raises it.
      await approvals?.relay();
      approvals?.close();
    }
  }

  private async awaitCall(
    requestId: string,
    connectorId: string,
    heldBy: string,
    req: InvokeRequest,
    approvals: SenderApprovals | undefined,
  ): Promise<InvokeResult | undefined> {
    let limit = this.o.clock.now() + this.waitLimitMs(req.deadlineMs);
    let cancelled = false;
    let approvalWaitEnded = false;
    let shown = false;
    for (;;) {
      // Woken by a caller's abort it has not acted on yet.
      const wake = [cancelled ? undefined : req.signal, approvalWaitEnded ? undefined : req.approvalSignal].filter(
        (x): x is AbortSignal => x !== undefined,
      );
      await this.waitFor(
        requestId,
        Math.max(1, Math.min(this.period(), limit - this.o.clock.now())),
        wake.length > 1 ? AbortSignal.any(wake) : wake[0],
      );
      await approvals?.relay();
      // The caller stopped waiting for an approval: so does the holder (the call fails MHS.HOST.APPROVAL_REQUIRED, the
      // approval still pending, as here); a call that needed none goes on.
      if (req.approvalSignal?.aborted && !approvalWaitEnded) {
        approvalWaitEnded = true;
        await this.requests.endApprovalWait(requestId);
      }
      if (req.signal?.aborted && !cancelled) {
        cancelled = true;
        // The caller gave up: not claimed yet, the call is withdrawn (nothing sent); claimed, the holder aborts it as
        // a local abort would and its outcome (not sent, or unknown once sent) is awaited a little longer here.
        if ((await this.requests.cancel(requestId)) === 'withdrawn')
          throw await recordWithdrawn(this.o.ledger, this.o.onError, req, requestId, withdrawnError(requestId, req));
        limit = Math.min(limit, this.o.clock.now() + FORWARD_SLACK_MS);
      }
      const r = (await this.requests.get(requestId))!;
      const done = this.ended(r);
      if (done) return done;
      // Withdrawn, not by this wait (an operator, or a caller's abort that raced the claim): nothing was sent.
      if (r.status === 'expired') throw withdrawnError(requestId, req, false);
      // HOST-003: the holder discloses the session on this caller's surface before its first call.
      if (r.disclosure && !r.disclosureAck && !shown && req.disclosure?.show) {
        shown = true;
        await showForHolder(this.requests, requestId, r.disclosure, req.disclosure.show);
        continue;
      }
      // The holder is gone: this process takes the endpoint over (its own sweep may have done so already).
      if (!this.o.ownership.holds(connectorId) && (await this.holderGone(connectorId)))
        await this.o.ownership.sweepNow();
      if (this.o.ownership.holds(connectorId)) return this.takeOver(requestId);
      // Claimed by a holder that lost the endpoint since: its successor reconciles the command (HOST-091).
      if (r.status === 'sent' && r.commandId && (await this.holderOf(connectorId))?.owner !== r.appliedBy) {
        const settled = await this.fromLedger(r.commandId);
        if (settled) return settled;
      }
      if (this.o.clock.now() >= limit) return this.timeout(requestId, heldBy, req);
    }
  }

  /**
   * The sender of an operation that journals no intent (a tool call, the end of a session scope) on an endpoint
   * another process attaches: its result, or undefined when this process took the endpoint over before the holder
   * settled it (make it here; a read made twice changes nothing). `MHS.HOST.ENDPOINT_FORWARD_TIMEOUT` when the holder
   * does not answer within `waitMs` plus the transport margin and slack.
   */
  async sendOp(
    connectorId: string,
    endpointId: string,
    op: ForwardedOpOther,
    waitMs: number,
    opts: { unclaimedMs?: number } = {},
  ): Promise<unknown> {
    const requestId = await this.requests.store(connectorId, endpointId, op);
    this.sending.add(requestId);
    try {
      return await this.awaitOp(requestId, connectorId, endpointId, op, waitMs, opts.unclaimedMs);
    } finally {
      this.sending.delete(requestId);
    }
  }

  /**
   * Whether another live process holds the enabled endpoint `endpointId` (its lease not lapsed, its process not seen
   * gone): its connector, else undefined (this process holds it, or nobody does, or its holder is gone).
   */
  async liveHolderElsewhere(endpointId: string): Promise<string | undefined> {
    if (this.closed) return undefined;
    const connectorId = await this.o.connectorOf(endpointId);
    if (!connectorId || this.o.ownership.holds(connectorId)) return undefined;
    return (await this.heldElsewhere()).some((h) => h.connectorId === connectorId) ? connectorId : undefined;
  }

  private async awaitOp(
    requestId: string,
    connectorId: string,
    endpointId: string,
    op: ForwardedOpOther,
    waitMs: number,
    unclaimedMs?: number,
  ): Promise<unknown> {
    const start = this.o.clock.now();
    const limit = start + waitMs + (this.o.transportMarginMs ?? 2_000) + FORWARD_SLACK_MS;
    for (;;) {
      const claimBy = unclaimedMs === undefined ? limit : start + unclaimedMs;
      const until = this.o.clock.now() < claimBy ? Math.min(claimBy, limit) : limit;
      await this.waitFor(requestId, Math.max(1, Math.min(this.period(), until - this.o.clock.now())));
      const r = (await this.requests.get(requestId))!;
      if (r.status === 'applied') return r.result;
      if (r.status === 'failed') throw storedError(r.result);
      // Not claimed in time (a paused holder): withdrawn, so it is made here and never by the holder too.
      if (
        unclaimedMs !== undefined &&
        this.o.clock.now() >= start + unclaimedMs &&
        (await this.requests.withdraw(requestId))
      )
        return undefined;
      if (!this.o.ownership.holds(connectorId) && (await this.holderGone(connectorId)))
        await this.o.ownership.sweepNow();
      if (this.o.ownership.holds(connectorId) && (await this.requests.withdraw(requestId, { claimed: true })))
        return undefined;
      if (this.o.clock.now() < limit) continue;
      if (await this.requests.withdraw(requestId, { claimed: true })) {
        const heldBy = (await this.holderOf(connectorId))?.owner ?? 'none';
        throw new HostError(
          ErrorCode.HOST_ENDPOINT_FORWARD_TIMEOUT,
          `the host process holding endpoint ${endpointId} (${heldBy}) did not answer the forwarded ${opName(op)} in time; it was withdrawn`,
          { requestId, endpointId, connectorId, heldBy },
          { remediation: 'Try again, or check the holder with `mhs-host hosts`.' },
        );
      }
    }
  }

  private ended(r: EndpointRequest): InvokeResult | undefined {
    if (r.status === 'applied') return resultOf(r.result as StoredResult);
    if (r.status === 'failed') throw storedError(r.result);
    return undefined;
  }

  private waitFor(requestId: string, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        this.o.clock.clearTimeout(t);
        this.waiters.delete(requestId);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const t = this.o.clock.setTimeout(done, ms);
      this.waiters.set(requestId, done);
      if (signal?.aborted) done();
      else signal?.addEventListener('abort', done, { once: true });
    });
  }

  private async holderOf(connectorId: string): Promise<{ owner: string; expiresAt: number } | undefined> {
    const row = await this.o.db.get<{ owner: string; expires_at_ms: number }>(
      'SELECT owner, expires_at_ms FROM endpoint_leases WHERE connector_id = ?',
      [connectorId],
    );
    return row ? { owner: row.owner, expiresAt: Number(row.expires_at_ms) } : undefined;
  }

  /** The endpoints other live processes hold (named once attached there): what a non-holder reaches through them. */
  async heldElsewhere(): Promise<Array<{ connectorId: string; endpointId: string }>> {
    const rows = await this.o.db.all<{
      connector_id: string;
      endpoint_id: string;
      owner: string;
      expires_at_ms: number;
    }>(
      `SELECT connector_id, endpoint_id, owner, expires_at_ms FROM endpoint_leases
       WHERE owner <> ? AND endpoint_id IS NOT NULL AND expires_at_ms >= ? ORDER BY connector_id`,
      [this.o.ownership.owner, this.o.clock.now() - this.o.ownership.skewMs],
    );
    return rows
      .filter((r) => ownerAlive(r.owner) !== false && !this.o.ownership.holds(r.connector_id))
      .map((r) => ({ connectorId: r.connector_id, endpointId: r.endpoint_id }));
  }

  /** Lapsed past the skew, or its process (on this machine) is gone: the sweep may take the lease. */
  private async holderGone(connectorId: string): Promise<boolean> {
    const h = await this.holderOf(connectorId);
    if (!h) return true;
    return h.expiresAt < this.o.clock.now() - this.o.ownership.skewMs || ownerAlive(h.owner) === false;
  }

  /**
   * This process now holds the endpoint: an unclaimed call is withdrawn (made here: its own holder side skips the
   * calls it is waiting for), a claimed one reconciled.
   */
  private async takeOver(requestId: string): Promise<InvokeResult | undefined> {
    if (await this.requests.withdraw(requestId)) return undefined;
    const r = (await this.requests.get(requestId))!;
    const done = this.ended(r);
    if (done) return done;
    // Claimed by the former holder (its intent is durable): reconciled by command id, never sent again (HOST-091).
    const commandId = r.commandId!;
    await this.o.engine().reconcile({ commandId, untilSettled: true });
    const settled = await this.fromLedger(commandId);
    if (settled) return settled;
    throw this.unknown(requestId, commandId, 'its former holder is gone and reconciliation did not settle it yet');
  }

  /** The outcome of a command as the ledger holds it once settled (its last receipt), else undefined. */
  private async fromLedger(commandId: string): Promise<InvokeResult | undefined> {
    const entries = await this.o.ledger.byCommand(commandId);
    const intent = entries.find((e) => e.kind === 'command.intent');
    const receipt = entries.filter((e) => e.kind === 'receipt').at(-1);
    if (!intent || !receipt) return undefined;
    return {
      commandId,
      outcome: 'final',
      receipt: receipt.receipt as unknown as Receipt,
      traceparent: String(intent.traceparent ?? ''),
      intentSeq: intent.seq,
      recorded: Promise.resolve(receipt.seq),
    };
  }

  private async timeout(requestId: string, heldBy: string, req: InvokeRequest): Promise<InvokeResult> {
    const r0 = (await this.requests.get(requestId))!;
    if (await this.requests.withdraw(requestId))
      throw await recordWithdrawn(
        this.o.ledger,
        this.o.onError,
        req,
        requestId,
        new HostError(
          ErrorCode.HOST_ENDPOINT_FORWARD_TIMEOUT,
          `the host process holding endpoint ${r0.endpointId} (${heldBy}) did not start the forwarded call in time; it was withdrawn and nothing was sent`,
          { requestId, endpointId: r0.endpointId, connectorId: r0.connectorId, heldBy },
          { remediation: 'Send the call again, or check the holder with `mhs-host hosts`.' },
        ),
      );
    const r = (await this.requests.get(requestId))!;
    const done = this.ended(r);
    if (done) return done;
    throw this.unknown(requestId, r.commandId ?? '', `the holder ${heldBy} sent it and has not reported its outcome`);
  }

  private unknown(requestId: string, commandId: string, why: string): HostError {
    return new HostError(
      ErrorCode.OUTCOME_UNKNOWN,
      `the outcome of forwarded command ${commandId} is unknown: ${why}`,
      { command_id: commandId, requestId },
      { remediation: 'Do not send it again: the endpoint holder reconciles it by command_id; read the ledger.' },
    );
  }

  /** Whether a forwarded call or operation on `connectorId` is being applied here. */
  busyWith(connectorId: string): boolean {
    return [...this.applying.values()].includes(connectorId);
  }

  /** Stops listening and applying; waits for the calls being applied here. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) this.o.clock.clearTimeout(this.timer);
    if (this.watch) this.o.clock.clearTimeout(this.watch);
    this.timer = this.watch = null;
    for (const wake of this.relays.values()) wake();
    for (const wake of this.waiters.values()) wake();
    await Promise.all(this.work);
    await this.listener?.close();
  }
}
