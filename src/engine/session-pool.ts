import { fromPromise, waitFor } from 'xstate';
import { ErrorCode, HostError, isoAt, jcs, toHostError } from '../core/index.js';
import type { Clock, MhsWireError, TimerHandle } from '../core/index.js';
import type { EndpointConnection } from '../mhs/connection.js';
import type { Principal, Session } from '../mhs/wire-types.js';
import type { Ledger } from '../ledger/ledger-types.js';
import type { Db } from '../ledger/db.js';
import { endpointSessionMachine, startSessionActor } from '../../machines/endpoint-session.js';
import type { SessionActor, SessionContext, SessionGrant } from '../../machines/endpoint-session.js';
import type { PersistedSession, SessionSnapshotStore } from './session-store.js';

/** What the governed call needs of an open session. */
export interface SessionLease {
  sessionId: string;
  state: 'open';
  expiresAt: number;
  /**
   * Ends this call's hold on the session (idempotent). Until then the session is in use and never closed as
   * idle (issue 16); an ad-hoc session closes `adhocIdleMs` after its last release.
   */
  release(): void;
}

/** Options of a {@link SessionPool}. */
export interface SessionPoolOptions {
  endpointId: string;
  conn: EndpointConnection;
  clock: Clock;
  ledger: Ledger;
  /** Built by the host, never by the model (HOST-035). */
  principal: Principal;
  ttlMs: number;
  /** Transport timeout of session calls. */
  callTimeoutMs: number;
  /** Ad-hoc sessions (no task) close after this much idle time. */
  adhocIdleMs: number;
  onBackgroundError?: (err: HostError) => void;
  /** Persists session snapshots so a restarted host can {@link SessionPool.restore} them (HOST-036). */
  store?: SessionSnapshotStore;
  /**
   * Session mode to request (default `live`). With `replay`, a session the endpoint opens in any other mode is
   * closed at once and refused with `MHS.HOST.REPLAY_REFUSED`: a replay never executes a command (HOST-085).
   */
  mode?: 'live' | 'replay';
  /**
   * The endpoint-lease fence (issue 19, a shared PostgreSQL store): every session entry is appended, and every
   * snapshot written, in a transaction that checks it first, so a process that lost the endpoint records nothing.
   */
  fence?: (t: Db) => Promise<void>;
  /** Checks that fence now, in its own transaction: before a session is opened, heartbeated or closed at the endpoint. */
  checkFence?: () => Promise<void>;
}

/** The scope of calls made outside a task: sessions per device and capability, closed when idle. */
export const ADHOC_SCOPE = 'adhoc';

interface Entry {
  key: string;
  scope: string;
  deviceId: string;
  actor: SessionActor;
  /** What was last written to the store, to skip identical writes. */
  saved?: string;
  /** Store writes of this entry, in order. */
  writes: Promise<void>;
  /** Leases held now (the machine counts one hold while this is above zero or a release is pending). */
  leases?: number;
  /** The last lease's release, told to the machine a moment later unless another lease is taken first. */
  pendingRelease?: { timer: TimerHandle; idleDueAt: number | null } | null;
}

/**
 * How long the last release waits before the machine hears of it (issue 21): a call that takes the session again
 * meanwhile (a sequential caller's next call) keeps it held, so a busy session costs no machine event per call.
 * The idle deadline is still measured from the release itself.
 */
const RELEASE_COALESCE_MS = 25;

/** The pool key (and store key) of a session: scope, device and capability set. */
function keyOf(scope: string, deviceId: string, caps: string[]): string {
  return jcs([scope, deviceId, caps]);
}

function faultOf(sc: Record<string, unknown>): HostError {
  const w = (sc.error ?? {}) as MhsWireError;
  return HostError.fromWire({
    mhs_code: w.mhs_code ?? ErrorCode.HOST_INTERNAL,
    message: w.message ?? 'session fault',
    remediation: w.remediation ?? '',
    ...(w.details ? { details: w.details } : {}),
  });
}

/**
 * The sessions of one endpoint (HOST-034, 036, 080): one session machine per (task scope, device, capability
 * set), requesting only the capabilities the scope needs, heartbeated before expiry, reopened on demand after
 * expiry (re-reading the device state), and closed when the scope ends. Never shared across endpoints.
 */
export class SessionPool {
  private readonly entries = new Map<string, Entry>();
  /** Pool keys by (scope, device, capabilities as asked): every call asks again (issue 21). */
  private readonly keys = new Map<string, { caps: string[]; key: string }>();
  private readonly ttlBySession = new Map<string, number>();

  constructor(private readonly o: SessionPoolOptions) {}

  private async call(tool: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    const r = await this.o.conn.callTool(tool, args, { timeoutMs: this.o.callTimeoutMs });
    if (r.isError) throw faultOf(r.structuredContent);
    return r.structuredContent;
  }

  private grantFrom(s: Session, ttl?: number): SessionGrant {
    const now = this.o.clock.now();
    // Endpoint and host clocks may differ: keep the endpoint's lifetime, measured on the host clock.
    const life = ttl ?? Math.max(0, Date.parse(s.expires_at) - Date.parse(s.opened_at));
    this.ttlBySession.set(s.session_id, life);
    return { sessionId: s.session_id, expiresAt: now + life, heartbeatIntervalMs: s.heartbeat_interval_ms, now };
  }

  private logic(scope: string) {
    const o = this.o;
    const record = (kind: 'session.expired' | 'session.close', sessionId: string | null, deviceId: string) =>
      void this.append({
        kind,
        session_id: sessionId,
        endpoint_id: o.endpointId,
        device_id: deviceId,
        scope,
        at: isoAt(o.clock.now()),
      }).catch((e: unknown) => this.report(toHostError(e)));
    return endpointSessionMachine.provide({
      actors: {
        openSession: fromPromise(async ({ input }) => {
          await o.checkFence?.();
          const s = (await this.call('mhs__session', {
            action: 'open',
            device_id: input.deviceId,
            capabilities: input.capabilities,
            ttl_ms: input.ttlMs,
            principal: o.principal,
            mode: o.mode ?? 'live',
          })) as unknown as Session;
          if (o.mode === 'replay' && s.mode !== 'replay') await this.refuseNonReplay(s, scope);
          const grant = this.grantFrom(s);
          // HOST-036: after expiry, re-read the device state before the new session is used.
          let state: { revision?: unknown; state_hash?: unknown } | undefined;
          if (input.previousSessionId)
            state = (await this.call('mhs__read', {
              device_id: input.deviceId,
              _mhs: { session_id: s.session_id },
            }).catch(() => undefined)) as typeof state;
          await this.append({
            kind: 'session.open',
            session_id: s.session_id,
            endpoint_id: o.endpointId,
            device_id: input.deviceId,
            capabilities: s.capabilities,
            principal: s.principal,
            mode: s.mode,
            expires_at: s.expires_at,
            scope,
            ...(input.previousSessionId
              ? {
                  reopened_from: input.previousSessionId,
                  revision: state?.revision ?? null,
                  state_hash: state?.state_hash ?? null,
                }
              : {}),
          });
          return grant;
        }),
        heartbeat: fromPromise(async ({ input }) => {
          await o.checkFence?.();
          const s = (await this.call('mhs__session', {
            action: 'heartbeat',
            session_id: input.sessionId,
          })) as unknown as Session;
          const grant = this.grantFrom(s, this.ttlBySession.get(input.sessionId));
          await this.append({
            kind: 'session.heartbeat',
            session_id: input.sessionId,
            endpoint_id: o.endpointId,
            expires_at: s.expires_at,
          });
          return grant;
        }),
        closeSession: fromPromise(async ({ input }) => {
          this.ttlBySession.delete(input.sessionId);
          // A process that lost the endpoint leaves the session to its new holder, which restored it (HOST-036).
          await o.checkFence?.();
          await this.call('mhs__session', { action: 'close', session_id: input.sessionId });
        }),
      },
      actions: {
        recordExpired: ({ context }) => record('session.expired', context.sessionId, context.deviceId),
        recordClosed: ({ context }) => {
          if (context.sessionId) record('session.close', context.sessionId, context.deviceId);
        },
      },
    });
  }

  /** A background failure; not a fence's refusal (the process that lost the endpoint already said so, issue 19). */
  private report(err: HostError): void {
    if (err.code !== ErrorCode.HOST_ENDPOINT_LEASE_LOST) this.o.onBackgroundError?.(err);
  }

  /** Appends a session entry, under the endpoint-lease fence when there is one (issue 19). */
  private async append(entry: Parameters<Ledger['append']>[0]): Promise<unknown> {
    const fence = this.o.fence;
    return fence ? this.o.ledger.appendBatch([entry], { fence }) : this.o.ledger.append(entry);
  }

  /** HOST-085: a replay run got a session that is not in replay mode: close it, record why, refuse. */
  private async refuseNonReplay(s: Session, scope: string): Promise<never> {
    await this.call('mhs__session', { action: 'close', session_id: s.session_id }).catch(() => undefined);
    const details = { endpoint_id: this.o.endpointId, device_id: s.device_id, session_id: s.session_id, mode: s.mode };
    const err = new HostError(
      ErrorCode.HOST_REPLAY_REFUSED,
      `endpoint ${this.o.endpointId} opened a ${String(s.mode)} session for ${s.device_id}: a replay is refused`,
      details,
      { remediation: 'Start the endpoint in replay mode (e.g. `mhs-host sim <family> --replay BUNDLE`).' },
    );
    await this.o.ledger
      .append({ kind: 'error', phase: 'replay_refused', scope, ...details, error: err.toWire() })
      .catch(() => undefined);
    throw err;
  }

  /**
   * An open session for `scope` on `deviceId` with exactly `capabilities`; opens or reopens one as needed.
   * Fails with the endpoint's `MHS.SESSION.*` / `MHS.AUTH.*` code or a transport code.
   */
  async acquire(scope: string, deviceId: string, capabilities: string[]): Promise<SessionLease> {
    const { caps, key } = this.keyFor(scope, deviceId, capabilities);
    let e = this.entries.get(key);
    if (!e) {
      const actor = startSessionActor(this.logic(scope), {
        clock: this.o.clock,
        input: { endpointId: this.o.endpointId, deviceId, capabilities: caps, ttlMs: this.o.ttlMs },
      });
      e = this.track({ key, scope, deviceId, actor, writes: Promise.resolve() });
    }
    // Held from now until the call releases it: a session in use is not idle (issue 16). A restored task session
    // claimed by its task again loses its idle deadline: the task closes it (HOST-034).
    const held = e;
    this.hold(held);
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      this.release(held, scope === ADHOC_SCOPE ? this.o.clock.now() + this.o.adhocIdleMs : null);
    };
    let snap = e.actor.getSnapshot();
    if (snap.matches('expired')) e.actor.send({ type: 'session.reopen' });
    if (!snap.matches('open')) snap = await waitFor(e.actor, (s) => s.matches('open') || s.status === 'done');
    if (snap.status === 'done' || !snap.context.sessionId || snap.context.expiresAt === null) {
      release();
      this.tellRelease(e);
      if (this.entries.get(key) === e) this.entries.delete(key);
      const err = snap.context.error;
      throw new HostError(
        (err?.code as ErrorCode | undefined) ?? ErrorCode.SESSION_UNKNOWN,
        `no session for ${deviceId} on ${this.o.endpointId}: ${err?.message ?? 'closed'}`,
        { endpoint_id: this.o.endpointId, device_id: deviceId, session_open: 'failed' },
      );
    }
    return { sessionId: snap.context.sessionId, state: 'open', expiresAt: snap.context.expiresAt, release };
  }

  /** A lease taken: the machine hears `session.hold` unless it still counts one (a release not told yet). */
  private hold(e: Entry): void {
    e.leases = (e.leases ?? 0) + 1;
    if (e.pendingRelease) {
      this.o.clock.clearTimeout(e.pendingRelease.timer);
      e.pendingRelease = null;
    } else if (e.leases === 1) e.actor.send({ type: 'session.hold' });
  }

  /** A lease released: the last one is told to the machine after {@link RELEASE_COALESCE_MS}. */
  private release(e: Entry, idleDueAt: number | null): void {
    e.leases = Math.max(0, (e.leases ?? 0) - 1);
    if (e.leases > 0) return;
    const timer = this.o.clock.setTimeout(() => this.tellRelease(e), RELEASE_COALESCE_MS);
    e.pendingRelease = { timer, idleDueAt };
  }

  /** Tells the machine of a pending release now. */
  private tellRelease(e: Entry): void {
    const p = e.pendingRelease;
    if (!p) return;
    this.o.clock.clearTimeout(p.timer);
    e.pendingRelease = null;
    if (e.actor.getSnapshot().status === 'active') e.actor.send({ type: 'session.release', idleDueAt: p.idleDueAt });
  }

  private keyFor(scope: string, deviceId: string, capabilities: string[]): { caps: string[]; key: string } {
    const asked = JSON.stringify([scope, deviceId, capabilities]);
    let k = this.keys.get(asked);
    if (!k) {
      const caps = [...new Set(capabilities)].sort();
      k = { caps, key: keyOf(scope, deviceId, caps) };
      if (this.keys.size >= 1024) this.keys.clear();
      this.keys.set(asked, k);
    }
    return { caps: [...k.caps], key: k.key };
  }

  /**
   * Adds an entry and persists its stable states (open and idle, expired) and its end. A machine that closes
   * itself (idle deadline) leaves the pool as it starts closing, so the next acquire opens a new session.
   */
  private track(e: Entry): Entry {
    this.entries.set(e.key, e);
    e.actor.subscribe({
      next: (snap) => {
        if ((snap.status === 'done' || snap.matches('closing')) && this.entries.get(e.key) === e)
          this.entries.delete(e.key);
        this.persist(e, snap);
      },
      error: () => undefined,
    });
    this.persist(e, e.actor.getSnapshot());
    return e;
  }

  private persist(e: Entry, snap: ReturnType<SessionActor['getSnapshot']>): void {
    const store = this.o.store;
    if (!store || (snap.status !== 'active' && snap.status !== 'done')) return;
    const done = snap.status === 'done';
    // Transient states (an open, heartbeat or close in progress) are not persisted: XState would re-run them.
    if (!done && !snap.matches({ open: 'idle' }) && !snap.matches('expired')) return;
    const c: SessionContext = snap.context;
    // Compared for equality only, in memory: no canonical form needed (this runs on every hold and release).
    const sig = done ? 'done' : `${JSON.stringify(snap.value)}|${c.sessionId}|${c.expiresAt}|${c.heartbeatDueAt}`;
    if (sig === e.saved) return;
    e.saved = sig;
    const row: PersistedSession = {
      endpointId: this.o.endpointId,
      key: e.key,
      scope: e.scope,
      deviceId: e.deviceId,
      sessionId: c.sessionId,
      expiresAt: c.expiresAt,
      snapshot: done ? {} : (e.actor.getPersistedSnapshot() as unknown as Record<string, unknown>),
    };
    e.writes = e.writes
      .then(() => (done ? store.remove(row.endpointId, row.key, this.o.fence) : store.save(row, this.o.fence)))
      .catch((err: unknown) => this.report(toHostError(err, ErrorCode.HOST_LEDGER_UNAVAILABLE)));
  }

  /**
   * Restores persisted sessions after a host restart (HOST-036). Deadlines are data: each machine re-arms its
   * heartbeat and expiry from the absolute times in its snapshot (XState drops pending timers on restore), so a
   * session whose `expires_at` passed goes to expired at once and is reopened on its next use, and a live one
   * heartbeats when due (an endpoint answering `MHS.SESSION.UNKNOWN`/`EXPIRED` sends it to expired too).
   * Restored sessions close after the idle time unless a call claims them. With `expire` (the endpoint is a
   * fresh process, e.g. a stdio child this host just spawned, which cannot know them) every restored session is
   * treated as expired and reopened on next use.
   */
  restore(rows: PersistedSession[], opts: { expire?: boolean } = {}): number {
    let n = 0;
    for (const r of rows) {
      if (r.endpointId !== this.o.endpointId || this.entries.has(r.key) || !r.snapshot.context) continue;
      const c = r.snapshot.context as SessionContext;
      if (c.sessionId && c.expiresAt !== null && c.grantedAt !== null)
        this.ttlBySession.set(c.sessionId, Math.max(0, c.expiresAt - c.grantedAt));
      let actor: SessionActor;
      try {
        actor = startSessionActor(this.logic(r.scope), {
          clock: this.o.clock,
          input: { endpointId: c.endpointId, deviceId: c.deviceId, capabilities: c.capabilities, ttlMs: c.ttlMs },
          // Holds belong to calls of the process that stored the snapshot: none survives a restart.
          snapshot: { ...r.snapshot, context: { ...c, holds: 0 } } as never,
        });
      } catch (err) {
        // A snapshot this machine cannot take (another version): forgotten; the next use opens a new session.
        this.o.onBackgroundError?.(toHostError(err));
        void this.o.store?.remove(r.endpointId, r.key).catch(() => undefined);
        continue;
      }
      // Past its expires_at while the host was down: expired now, not after a zero-delay timer.
      const lapsed = c.expiresAt !== null && c.expiresAt <= this.o.clock.now();
      if (actor.getSnapshot().matches('open') && (lapsed || opts.expire === true))
        actor.send({ type: 'session.expired' });
      const e = this.track({ key: r.key, scope: r.scope, deviceId: r.deviceId, actor, writes: Promise.resolve() });
      // Nothing holds a restored session: it closes after the idle time unless a call claims it.
      e.actor.send({ type: 'session.release', idleDueAt: this.o.clock.now() + this.o.adhocIdleMs });
      n++;
    }
    return n;
  }

  /** Resolves when every snapshot write queued so far is done. */
  async flush(): Promise<void> {
    await Promise.all([...this.entries.values()].map((e) => e.writes));
  }

  /**
   * The connection was lost and re-established: every session of the old connection is unknown, so each open one
   * is treated as expired and reopened (with a fresh read of the device) on its next use (HOST-036).
   */
  expireAll(): void {
    for (const e of this.entries.values())
      if (e.actor.getSnapshot().matches('open')) e.actor.send({ type: 'session.expired' });
  }

  /** Forgets every session without talking to the endpoint (its connection is gone): timers stop, nothing is sent. */
  dropAll(): void {
    for (const e of this.entries.values()) {
      if (e.pendingRelease) this.o.clock.clearTimeout(e.pendingRelease.timer);
      e.pendingRelease = null;
      e.actor.stop();
    }
    this.entries.clear();
  }

  /**
   * Stops every session machine without closing its session at the endpoint, after its snapshot is stored: a host
   * that restarts over the same store restores and reuses them (HOST-036).
   */
  async suspend(): Promise<void> {
    await this.flush();
    this.dropAll();
  }

  /** The endpoint said the session is gone (`MHS.SESSION.EXPIRED`/`UNKNOWN`): the next acquire reopens it. */
  expired(sessionId: string): void {
    for (const e of this.entries.values())
      if (e.actor.getSnapshot().context.sessionId === sessionId) e.actor.send({ type: 'session.expired' });
  }

  private async closeEntry(e: Entry): Promise<void> {
    if (this.entries.get(e.key) === e) this.entries.delete(e.key);
    this.tellRelease(e);
    e.actor.send({ type: 'session.close' });
    await waitFor(e.actor, (s) => s.status === 'done').catch(() => undefined);
    e.actor.stop();
    await e.writes;
  }

  /** Closes every session of `scope` (task end, HOST-034). */
  async closeScope(scope: string): Promise<void> {
    await Promise.all([...this.entries.values()].filter((e) => e.scope === scope).map((e) => this.closeEntry(e)));
  }

  /** Closes every session. */
  async closeAll(): Promise<void> {
    await Promise.all([...this.entries.values()].map((e) => this.closeEntry(e)));
  }

  /** Live sessions, for status surfaces and tests. */
  list(): Array<{ scope: string; deviceId: string; sessionId: string | null; state: string }> {
    return [...this.entries.values()].map((e) => {
      const s = e.actor.getSnapshot();
      return { scope: e.scope, deviceId: e.deviceId, sessionId: s.context.sessionId, state: JSON.stringify(s.value) };
    });
  }
}
