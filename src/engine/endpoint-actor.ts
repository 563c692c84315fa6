import { BehaviorSubject } from 'rxjs';
import { ErrorCode, HostError, isoAt, toHostError } from '../core/index.js';
import type { Clock } from '../core/index.js';
import type { CallOptions, EndpointConnection, ToolCallResult } from '../mhs/connection.js';
import { hasReconnectEvents } from '../mhs/reconnect.js';
import type { ReconnectEvent } from '../mhs/reconnect.js';
import type { CapabilityBinding, DeviceProfile, Manifest, Principal } from '../mhs/wire-types.js';
import type { Ledger } from '../ledger/ledger-types.js';
import type { Db } from '../ledger/db.js';
import { CommandLane } from './command-lane.js';
import type { LaneStats } from './command-lane.js';
import type { DeploymentAdmit } from './deployment-guard.js';
import type { DeploymentAccess } from '../policy/deployment-policy.js';
import { DeviceGates } from './device-gate.js';
import type { GateReason, GateState } from './device-gate.js';
import { SessionPool } from './session-pool.js';
import type { SessionLease } from './session-pool.js';
import type { PersistedSession, SessionSnapshotStore } from './session-store.js';

/** A connected, admitted endpoint as the engine takes it (the MCP connector's `MhsConnection` fits). */
export interface EngineEndpoint extends EndpointConnection {
  readonly connectorId: string;
  readonly manifest: Manifest;
}

/**
 * Lifecycle of an endpoint actor (HOST-082): `disconnected` while its connection is down (calls fail fast,
 * nothing is sent; a reconnecting connection comes back by itself), `recovering` right after a reconnect while
 * its unsettled commands are reconciled (their devices' gates stay shut, HOST-091), `stopped` once detached.
 */
export type EndpointStatus = 'connected' | 'disconnected' | 'recovering' | 'stopped';

/** The `reconnected` event of a reconnecting connection. */
export type ReconnectedEvent = Extract<ReconnectEvent, { type: 'reconnected' }>;

/** Why an actor's connection is (or was last) down. */
export interface ConnectionDrop {
  code: string;
  reason: string;
  at: string;
  /** True when the connection gave up for good (a refused manifest, a disabled connector, max attempts). */
  terminal: boolean;
}

/** Options of an {@link EndpointActor}. */
export interface EndpointActorOptions {
  clock: Clock;
  ledger: Ledger;
  principal: Principal;
  sessionTtlMs: number;
  sessionCallTimeoutMs: number;
  adhocIdleMs: number;
  laneMaxPending: number;
  /** The engine's deployment policy guard (HOST-090), asked before any session opens for a device. */
  admit: DeploymentAdmit;
  onBackgroundError?: (err: HostError) => void;
  /** Where session snapshots are persisted (HOST-036). */
  sessionStore?: SessionSnapshotStore;
  /** Session mode to request; `replay` refuses a non-replay session (HOST-085). Default `live`. */
  sessionMode?: 'live' | 'replay';
  /**
   * An endpoint that comes back with another manifest digest (HOST-012): `readmit` (default) takes the new
   * manifest, which passed admission again on reconnect (HOST-073); `refuse` closes the connection and the
   * actor stays disconnected with `MHS.HOST.MANIFEST_INVALID` (`reason: manifest_changed`).
   */
  onManifestChange?: 'readmit' | 'refuse';
  /** Runs after each reconnect, before the actor is `connected` again: the engine reconciles here (HOST-091). */
  onReconnected?: (ep: EndpointActor, e: ReconnectedEvent) => Promise<void>;
  /** Every connection event of this actor (observability). */
  onConnectionEvent?: (ep: EndpointActor, e: ReconnectEvent) => void;
  /**
   * The endpoint-lease fence (issue 19, a shared PostgreSQL store): checked in the transaction of every intent this
   * actor's commands journal, so a process that lost the endpoint journals and sends nothing.
   */
  fence?: (t: Db) => Promise<void>;
  /** That fence checked now in its own transaction: before a session is opened, heartbeated or closed (issue 19). */
  checkFence?: () => Promise<void>;
}

/**
 * One actor per enabled endpoint (HOST-080, 082): it owns the connection, the sessions, the device gates and
 * the bounded command lane of that endpoint, and shares none of them with another endpoint.
 */
export class EndpointActor {
  readonly endpointId: string;
  readonly connectorId: string;
  private readonly conn: EngineEndpoint;
  private readonly lane: CommandLane;
  private readonly gates: DeviceGates;
  private readonly sessions: SessionPool;
  readonly status$ = new BehaviorSubject<EndpointStatus>('connected');
  /** Bumped on every reconnect: a call that started in an older generation was on a connection now gone. */
  generation = 0;
  /** The last time the connection went down, or null. */
  lastDrop: ConnectionDrop | null = null;
  private admitted: Manifest;
  private recovery: Promise<void> = Promise.resolve();
  private readonly unsubscribe: () => void = () => undefined;
  private readonly devices = new Map<string, { device: DeviceProfile; bindings: Map<string, CapabilityBinding> }>();

  constructor(
    conn: EngineEndpoint,
    private readonly o: EndpointActorOptions,
  ) {
    this.conn = conn;
    this.admitted = conn.manifest;
    this.endpointId = conn.manifest.endpoint_id;
    this.connectorId = conn.connectorId;
    this.lane = new CommandLane({ endpointId: this.endpointId, maxPending: o.laneMaxPending });
    this.gates = new DeviceGates(this.endpointId);
    this.sessions = new SessionPool({
      endpointId: this.endpointId,
      conn,
      clock: o.clock,
      ledger: o.ledger,
      principal: o.principal,
      ttlMs: o.sessionTtlMs,
      callTimeoutMs: o.sessionCallTimeoutMs,
      adhocIdleMs: o.adhocIdleMs,
      ...(o.onBackgroundError ? { onBackgroundError: o.onBackgroundError } : {}),
      ...(o.sessionStore ? { store: o.sessionStore } : {}),
      ...(o.sessionMode ? { mode: o.sessionMode } : {}),
      ...(o.fence ? { fence: o.fence } : {}),
      ...(o.checkFence ? { checkFence: o.checkFence } : {}),
    });
    this.index(conn.manifest);
    if (hasReconnectEvents(conn)) this.unsubscribe = conn.onReconnectEvent((e) => this.onConnectionEvent(e));
    void conn.closed.then(({ code, reason }) => {
      this.lastDrop ??= { code, reason, at: isoAt(o.clock.now()), terminal: true };
      this.lastDrop.terminal = true;
      if (this.status$.value !== 'stopped' && this.status$.value !== 'disconnected') this.status$.next('disconnected');
    });
  }

  /** HOST-082: a drop, a reconnect or a give-up of this endpoint's connection touches this actor only. */
  private onConnectionEvent(e: ReconnectEvent): void {
    if (this.status$.value === 'stopped') return;
    try {
      this.o.onConnectionEvent?.(this, e);
    } catch {
      // Observers never break the actor.
    }
    const at = isoAt(this.o.clock.now());
    if (e.type === 'disconnected') {
      this.lastDrop = { code: ErrorCode.TRANSPORT_DISCONNECTED, reason: e.reason, at, terminal: false };
      this.status$.next('disconnected');
    } else if (e.type === 'gave-up') {
      // A refusal recorded first (a changed manifest) stays the reason, not the close that follows it.
      if (!this.lastDrop?.terminal) this.lastDrop = { code: e.code, reason: e.reason, at, terminal: true };
      this.status$.next('disconnected');
    } else if (e.type === 'reconnected') this.onReconnected(e);
  }

  /**
   * Synchronously, before any new call can use the new connection: the manifest decision (HOST-012, 073) and the
   * sessions of the old connection treated as expired, so the next use reopens them and re-reads the device
   * (HOST-036; never a blind resend). Then the engine's recovery reconciles unsettled commands (HOST-091).
   */
  private onReconnected(e: ReconnectedEvent): void {
    this.generation++;
    if (e.manifestChanged && (this.o.onManifestChange ?? 'readmit') === 'refuse') {
      this.lastDrop = {
        code: ErrorCode.HOST_MANIFEST_INVALID,
        reason: `manifest changed on reconnect (${e.previousDigest.slice(0, 12)} -> ${e.digest.slice(0, 12)})`,
        at: isoAt(this.o.clock.now()),
        terminal: true,
      };
      this.status$.next('disconnected');
      this.sessions.dropAll();
      void this.conn.close().catch(() => undefined);
      return;
    }
    if (e.manifestChanged) {
      this.admitted = this.conn.manifest;
      this.index(this.admitted);
    }
    this.sessions.expireAll();
    this.status$.next('recovering');
    const gen = this.generation;
    const previous = this.recovery;
    // One recovery at a time: a flapping endpoint never has the same command reconciled twice at once.
    this.recovery = (async () => {
      await previous;
      try {
        await this.o.onReconnected?.(this, e);
      } catch (err) {
        this.o.onBackgroundError?.(toHostError(err));
      }
      if (this.generation === gen && this.status$.value === 'recovering') this.status$.next('connected');
    })();
  }

  /**
   * A transport failure to this endpoint seen outside the engine (the operator route): the connection checks
   * itself now (`ReconnectingConnection.probeNow`); a drop it finds reaches this actor as any other (HOST-082).
   */
  probeNow(): void {
    if (this.status$.value === 'connected' && hasReconnectEvents(this.conn)) this.conn.probeNow?.();
  }

  /** Resolves when the recovery after the last reconnect has run. */
  recovered(): Promise<void> {
    return this.recovery;
  }

  /**
   * Fails fast when the connection is down: `MHS.TRANSPORT.DISCONNECTED`, `sent: false`, retryable unless the
   * connection gave up for good (then `lastDrop.code`, e.g. `MHS.HOST.MANIFEST_INVALID`).
   */
  assertConnected(): void {
    if (this.status$.value !== 'disconnected' && this.status$.value !== 'stopped') return;
    const d = this.lastDrop;
    const code =
      d?.terminal && d.code !== ErrorCode.TRANSPORT_DISCONNECTED
        ? (d.code as ErrorCode)
        : ErrorCode.TRANSPORT_DISCONNECTED;
    throw new HostError(
      code,
      `endpoint ${this.endpointId} is ${this.status$.value}${d ? `: ${d.reason}` : ''}`,
      { endpoint_id: this.endpointId, sent: false, status: this.status$.value, ...(d ? { drop: { ...d } } : {}) },
      {
        remediation: d?.terminal
          ? 'The host will not reconnect by itself: check the endpoint, then attach it again.'
          : 'Nothing was sent; the host is reconnecting with backoff. Retry when the endpoint is back.',
        retryable: !d?.terminal,
      },
    );
  }

  private index(m: Manifest): void {
    this.devices.clear();
    for (const d of m.devices)
      this.devices.set(d.device_id, { device: d, bindings: new Map(d.capabilities.map((c) => [c.capability_id, c])) });
  }

  /** The admitted manifest (the connection's current one, unless a changed one was refused). */
  get manifest(): Manifest {
    return this.admitted;
  }

  /**
   * The device profile and capability binding from the admitted manifest.
   * @throws HostError `MHS.SCHEMA.INVALID_INPUT` for an unknown device or capability (wire contract §4).
   */
  resolve(deviceId: string, capabilityId: string): { device: DeviceProfile; binding: CapabilityBinding } {
    const d = this.devices.get(deviceId);
    const binding = d?.bindings.get(capabilityId);
    if (!d || !binding)
      throw new HostError(
        ErrorCode.SCHEMA_INVALID_INPUT,
        d
          ? `device ${deviceId} has no capability ${capabilityId}`
          : `endpoint ${this.endpointId} has no device ${deviceId}`,
        { endpoint_id: this.endpointId, device_id: deviceId, capability_id: capabilityId },
        { remediation: 'Pick a device and capability from the manifest (mhs__inspect).' },
      );
    return { device: d.device, binding };
  }

  /**
   * HOST-090: admits `access` to `deviceId` under the deployment policy, before any session is opened or intent
   * journaled. Throws `MHS.AUTH.DISABLED`, `MHS.AUTH.HARDWARE_DISABLED` or `MHS.HOST.POLICY_DENIED` (recorded as a
   * refusal), or `MHS.SCHEMA.INVALID_INPUT` for a device the manifest does not have (nothing is sent).
   */
  async admit(access: DeploymentAccess, deviceId: string, scope: Record<string, unknown> = {}): Promise<void> {
    const d = this.devices.get(deviceId);
    if (!d)
      throw new HostError(
        ErrorCode.SCHEMA_INVALID_INPUT,
        `endpoint ${this.endpointId} has no device ${deviceId}`,
        { endpoint_id: this.endpointId, device_id: deviceId },
        { remediation: 'Pick a device from the manifest (mhs__devices).' },
      );
    return this.o.admit(
      { endpointId: this.endpointId, connectorId: this.connectorId, device: d.device },
      access,
      scope,
    );
  }

  // Messages: what callers ask of this actor. Its connection, lane, gates and sessions stay its own.

  /** The endpoint-lease fence of this actor's side effects, when the endpoint is leased (issue 19). */
  get fence(): ((t: Db) => Promise<void>) | undefined {
    return this.o.fence;
  }

  /** A tool call on this endpoint's connection: reads, `mhs__operations`, evidence, fixed tools. */
  callTool(name: string, args: Record<string, unknown>, opts?: CallOptions): Promise<ToolCallResult> {
    return this.conn.callTool(name, args, opts);
  }

  /**
   * A capability call through the device's slot of the command lane (HOST-082): `onSent` runs when it leaves the
   * lane, right before it is handed to the transport. `MHS.LIMIT.RATE` when the lane is full (nothing sent). A call
   * whose `signal` aborts while it still waits in the lane fails at once `MHS.TRANSPORT.TIMEOUT_PRESEND` (nothing
   * sent) and is skipped at its turn; once it left the lane the transport decides (wire contract §6: an aborted call
   * that was sent has an unknown outcome).
   */
  sendCommand(
    deviceId: string,
    tool: string,
    args: Record<string, unknown>,
    opts: CallOptions,
    onSent: () => void,
  ): Promise<ToolCallResult> {
    const signal = opts.signal;
    const queuedAbort = () =>
      new HostError(ErrorCode.TRANSPORT_TIMEOUT_PRESEND, `call ${tool} aborted while queued in the device's lane`, {
        tool,
        endpoint_id: this.endpointId,
        device_id: deviceId,
        sent: false,
        aborted: true,
      });
    if (signal?.aborted) return Promise.reject(queuedAbort());
    let left = false;
    const job = this.runInLane(deviceId, () => {
      left = true;
      // Its caller already heard "not sent": it is never sent now.
      if (signal?.aborted) return Promise.reject(queuedAbort());
      onSent();
      return this.conn.callTool(tool, args, opts);
    });
    if (!signal) return job;
    return new Promise<ToolCallResult>((resolve, reject) => {
      const onAbort = (): void => {
        if (!left) reject(queuedAbort());
      };
      signal.addEventListener('abort', onAbort, { once: true });
      void job.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  /** Runs `job` in the device's slot of the command lane, after the jobs queued before it (HOST-082). */
  runInLane<T>(deviceId: string, job: () => Promise<T>): Promise<T> {
    return this.lane.submit(deviceId, job);
  }

  /** The command lane's counters (observability, tests). */
  laneStats(): Readonly<LaneStats> {
    return this.lane.stats();
  }

  /** The pid of the stdio child the connection spawned, or null (diagnostics). */
  get childPid(): number | null {
    return (this.conn as { pid?: number | null }).pid ?? null;
  }

  /** The MCP protocol revision the connection negotiated. */
  get protocolVersion(): string {
    return this.conn.protocolVersion;
  }

  /** A device's gate (HOST-091). */
  gateOf(deviceId: string): GateState {
    return this.gates.state(deviceId);
  }

  /** Throws `MHS.HOST.DEVICE_GATE_CLOSED` while an unsettled command holds the device's gate (HOST-091). */
  assertGateOpen(deviceId: string): void {
    this.gates.assertOpen(deviceId);
  }

  /** Shuts an open gate for a command now in flight (the command actor's projection of its state). */
  acquireGate(deviceId: string, commandId: string, now: number): void {
    this.gates.acquire(deviceId, commandId, now);
  }

  /** Shuts the device's gate for `commandId` with `reason` (a gate held by another command is left to it). */
  markGate(deviceId: string, commandId: string, reason: GateReason): void {
    this.gates.mark(deviceId, commandId, reason);
  }

  /** Reopens the device's gate if `commandId` holds it. */
  releaseGate(deviceId: string, commandId: string): void {
    this.gates.release(deviceId, commandId);
  }

  /** A lease on an open, least-privilege session for `scope` (HOST-034, 036); held until released. */
  acquireSession(scope: string, deviceId: string, capabilities: string[]): Promise<SessionLease> {
    return this.sessions.acquire(scope, deviceId, capabilities);
  }

  /** The endpoint said the session is gone: it is reopened on next use, never resent on (HOST-036). */
  sessionExpired(sessionId: string): void {
    this.sessions.expired(sessionId);
  }

  /** Closes the sessions of a task or run scope (HOST-034). */
  closeSessionScope(scope: string): Promise<void> {
    return this.sessions.closeScope(scope);
  }

  /** Restores sessions a previous host left (HOST-036); `expire`: reopen them all on next use. */
  restoreSessions(rows: PersistedSession[], opts: { expire?: boolean } = {}): number {
    return this.sessions.restore(rows, opts);
  }

  /** The open sessions (observability, tests). */
  sessionList(): ReturnType<SessionPool['list']> {
    return this.sessions.list();
  }

  /** Waits until every session snapshot is stored. */
  flushSessions(): Promise<void> {
    return this.sessions.flush();
  }

  /** Device profiles of the manifest. */
  deviceProfiles(): DeviceProfile[] {
    return [...this.devices.values()].map((d) => d.device);
  }

  /**
   * Stops the actor: closes sessions (or, with `keepSessions`, leaves them open at the endpoint with their
   * snapshots stored for the next host over the same store), the lane and the connection.
   */
  async stop(opts: { closeConnection?: boolean; keepSessions?: boolean } = {}): Promise<void> {
    if (this.status$.value === 'stopped') return;
    this.unsubscribe();
    this.lane.close();
    if (opts.keepSessions) await this.sessions.suspend();
    else if (this.status$.value === 'disconnected') this.sessions.dropAll();
    else await this.sessions.closeAll().catch(() => undefined);
    this.status$.next('stopped');
    this.status$.complete();
    if (opts.closeConnection !== false) await this.conn.close().catch(() => undefined);
  }
}
