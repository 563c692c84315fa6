/**
 * A connection that re-establishes itself with exponential backoff on the injected clock after the
 * transport dies (a dead child is respawned, a closed socket reopened). Calls in flight when it
 * died fail with `MHS.TRANSPORT.DISCONNECTED`; calls made while it is away wait for it until their
 * deadline and then fail with `MHS.TRANSPORT.TIMEOUT_PRESEND` (nothing was sent), or, with
 * `whileAway: 'fail'` (the engine's choice, HOST-082), fail at once with `MHS.TRANSPORT.DISCONNECTED`
 * and `sent: false`. Each reconnect fetches and admits the manifest again (same endpoint id required)
 * and reports whether it changed (HOST-012, HOST-073).
 */
import { ErrorCode, HostError, RealClock, toHostError } from '../core/index.js';
import type { Clock, TimerHandle } from '../core/index.js';
import type { CallOptions, ToolCallResult } from './connection.js';
import type { ConnectorRow, EndpointAuth } from './connector-row.js';
import { connect } from './connector.js';
import type { ConnectOptions, MhsConnection } from './connector.js';
import type { Manifest } from './wire-types.js';

/** Backoff of {@link ReconnectingConnection}: `min(maxMs, initialMs * factor^(attempt-1))`. */
export interface BackoffOptions {
  initialMs?: number;
  maxMs?: number;
  factor?: number;
  /** Attempts before giving up (default unlimited). */
  maxAttempts?: number;
}

export type ReconnectEvent =
  | { type: 'disconnected'; reason: string }
  | { type: 'reconnecting'; attempt: number; delayMs: number }
  | {
      type: 'reconnected';
      attempt: number;
      protocolVersion: string;
      manifestChanged: boolean;
      previousDigest: string;
      digest: string;
    }
  | { type: 'attempt-failed'; attempt: number; code: string }
  | { type: 'gave-up'; code: string; reason: string };

export interface ReconnectOptions extends ConnectOptions {
  backoff?: BackoffOptions;
  onEvent?: (e: ReconnectEvent) => void;
  /**
   * What a call made while the endpoint is away does: `wait` (default) for the connection until its deadline,
   * or `fail` at once with `MHS.TRANSPORT.DISCONNECTED`, `sent: false` (retryable).
   */
  whileAway?: 'wait' | 'fail';
  /**
   * Probe an idle connection this often (ms, on the injected clock) with `tools/list`, so an HTTP endpoint that
   * went away is noticed without waiting for the next call (stateless HTTP has no socket to watch). Default off.
   */
  probeIntervalMs?: number;
}

/** A connection that reports its reconnect events to late subscribers (the engine's endpoint actor). */
export interface ReconnectEvents {
  /** Adds a listener of {@link ReconnectEvent}s; returns the function that removes it. */
  onReconnectEvent(listener: (e: ReconnectEvent) => void): () => void;
  /** `connected`, `reconnecting` or `closed`. */
  readonly status: 'connected' | 'reconnecting' | 'closed';
  /** A transport failure seen elsewhere on this endpoint: check the connection now (see `ReconnectingConnection`). */
  probeNow?(): void;
}

/** Whether a connection reconnects by itself and reports it. */
export function hasReconnectEvents(c: unknown): c is ReconnectEvents {
  return typeof (c as Partial<ReconnectEvents> | null)?.onReconnectEvent === 'function';
}

/** Codes after which retrying cannot help: the endpoint was refused or disabled (HOST-073, HOST-068). */
const TERMINAL = new Set<string>([
  ErrorCode.HOST_CONNECTOR_DISABLED,
  ErrorCode.HOST_MANIFEST_INVALID,
  ErrorCode.HOST_DISCLOSURE_UNRENDERABLE,
  ErrorCode.AUTH_ENDPOINT_UNTRUSTED,
  ErrorCode.HOST_CONFIG_INVALID,
]);

/** The delay before attempt `n` (1-based). */
export function backoffDelay(n: number, b: BackoffOptions = {}): number {
  const initial = b.initialMs ?? 200;
  return Math.min(b.maxMs ?? 10_000, initial * Math.pow(b.factor ?? 2, Math.max(0, n - 1)));
}

/** See the module comment. Open with {@link connectWithReconnect}. */
export class ReconnectingConnection implements MhsConnection, ReconnectEvents {
  readonly closed: Promise<{ code: string; reason: string }>;
  private readonly listeners = new Set<(e: ReconnectEvent) => void>();
  private resolveClosed!: (v: { code: string; reason: string }) => void;
  private state: 'connected' | 'reconnecting' | 'closed' = 'connected';
  private waiters = new Set<() => void>();
  private timer: TimerHandle | null = null;
  private probeTimer: TimerHandle | null = null;
  /** The liveness check under way, if any (idle probe, {@link probeNow}, or after a lost request). */
  private checking: Promise<void> | null = null;
  private lastActivity: number;
  private readonly clock: Clock;

  constructor(
    private current: MhsConnection,
    private readonly row: ConnectorRow,
    private readonly opts: ReconnectOptions,
  ) {
    this.clock = opts.clock ?? new RealClock();
    this.closed = new Promise((r) => (this.resolveClosed = r));
    this.lastActivity = this.clock.now();
    this.watch(current);
    this.armProbe();
  }

  private armProbe(): void {
    const every = this.opts.probeIntervalMs ?? 0;
    if (every <= 0 || this.state !== 'connected' || this.probeTimer) return;
    this.probeTimer = this.clock.setTimeout(() => void this.probe(every), every);
  }

  /** A failed probe on a dead endpoint resolves that connection's `closed`, and `watch` reconnects. */
  private async probe(every: number): Promise<void> {
    this.probeTimer = null;
    if (this.state !== 'connected') return;
    if (this.clock.now() - this.lastActivity >= every) await this.check(this.current);
    this.armProbe();
  }

  /**
   * One `tools/list` on `conn`, at most one at a time. On a dead HTTP endpoint it fails before sending and
   * resolves that connection's `closed` (the endpoint is unreachable), and `watch` reconnects with backoff.
   */
  private check(conn: MhsConnection): Promise<void> {
    this.lastActivity = this.clock.now();
    this.checking ??= conn
      .listTools()
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => (this.checking = null));
    return this.checking;
  }

  /**
   * Someone else who talks to this endpoint (the devices panel's safety read over the operator route, an e-stop
   * that could not be sent) saw a transport failure: check now instead of at the next idle probe (HOST-082), so a
   * killed endpoint is seen `disconnected` at once and reconnected with backoff. The caller only reports; this
   * connection decides, and does nothing unless it is connected and no check is under way.
   */
  probeNow(): void {
    if (this.state === 'connected') void this.check(this.current); // owned: `checking`, awaited by close()
  }

  get endpointId(): string {
    return this.current.endpointId;
  }
  get connectorId(): string {
    return this.current.connectorId;
  }
  get transportKind(): MhsConnection['transportKind'] {
    return this.current.transportKind;
  }
  get protocolVersion(): string {
    return this.current.protocolVersion;
  }
  get manifest(): Manifest {
    return this.current.manifest;
  }
  get auth(): EndpointAuth['scheme'] {
    return this.current.auth;
  }
  get pid(): number | null {
    return this.current.pid;
  }
  /** `connected`, `reconnecting` or `closed`. */
  get status(): 'connected' | 'reconnecting' | 'closed' {
    return this.state;
  }

  onReconnectEvent(listener: (e: ReconnectEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(e: ReconnectEvent): void {
    for (const f of [this.opts.onEvent, ...this.listeners])
      try {
        f?.(e);
      } catch {
        // Observers never break the connection.
      }
  }

  private watch(conn: MhsConnection): void {
    void conn.closed.then(({ reason }) => {
      if (this.state === 'closed' || conn !== this.current) return;
      this.state = 'reconnecting';
      this.emit({ type: 'disconnected', reason });
      this.schedule(1);
    });
  }

  private schedule(attempt: number): void {
    const max = this.opts.backoff?.maxAttempts ?? Infinity;
    if (attempt > max) return this.finish(ErrorCode.TRANSPORT_DISCONNECTED, `gave up after ${max} attempts`);
    const delayMs = backoffDelay(attempt, this.opts.backoff);
    this.emit({ type: 'reconnecting', attempt, delayMs });
    this.timer = this.clock.setTimeout(() => void this.attempt(attempt), delayMs);
  }

  private async attempt(attempt: number): Promise<void> {
    this.timer = null;
    if (this.state === 'closed') return;
    const previousDigest = this.current.manifest.manifest_digest;
    try {
      // The endpoint must come back as itself (HOST-073: AUTH.ENDPOINT_UNTRUSTED otherwise, terminal).
      const row = { ...this.row, endpoint_id: this.current.endpointId || this.row.endpoint_id };
      const next = await connect(row, { ...this.opts, ignoreDescriptorDigest: true, closeOnUnreachable: true });
      // close() may have run while connecting.
      if ((this.state as string) !== 'closed') {
        this.current = next;
        this.state = 'connected';
        this.lastActivity = this.clock.now();
        this.watch(next);
        this.armProbe();
        const digest = next.manifest.manifest_digest;
        this.emit({
          type: 'reconnected',
          attempt,
          protocolVersion: next.protocolVersion,
          manifestChanged: digest !== previousDigest,
          previousDigest,
          digest,
        });
        const w = this.waiters;
        this.waiters = new Set();
        w.forEach((f) => f());
      } else await next.close();
    } catch (err) {
      const e = toHostError(err);
      this.emit({ type: 'attempt-failed', attempt, code: e.code });
      if (TERMINAL.has(e.code)) return this.finish(e.code, e.message);
      this.schedule(attempt + 1);
    }
  }

  private finish(code: string, reason: string): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    if (this.timer) this.clock.clearTimeout(this.timer);
    if (this.probeTimer) this.clock.clearTimeout(this.probeTimer);
    this.probeTimer = null;
    this.emit({ type: 'gave-up', code, reason });
    this.resolveClosed({ code, reason });
    const w = this.waiters;
    this.waiters = new Set();
    w.forEach((f) => f());
  }

  /** Waits for the connection to be back, up to `ms`; true when it is. */
  private waitConnected(ms: number, signal?: AbortSignal): Promise<boolean> {
    if (this.state === 'connected') return Promise.resolve(true);
    if (this.state === 'closed') return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = () => {
        this.clock.clearTimeout(h);
        this.waiters.delete(done);
        signal?.removeEventListener('abort', done);
        resolve(this.state === 'connected');
      };
      const h = this.clock.setTimeout(done, ms);
      this.waiters.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  async callTool(name: string, args: Record<string, unknown>, opts: CallOptions = {}): Promise<ToolCallResult> {
    const timeoutMs = opts.timeoutMs ?? this.opts.callTimeoutMs ?? 30_000;
    const deadline = this.clock.now() + timeoutMs;
    this.lastActivity = this.clock.now();
    for (;;) {
      const left = deadline - this.clock.now();
      if (this.state !== 'connected' && this.opts.whileAway === 'fail') throw this.away(name);
      if (this.state !== 'connected' && !(await this.waitConnected(Math.max(0, left), opts.signal)))
        throw new HostError(
          this.state === 'closed' ? ErrorCode.TRANSPORT_DISCONNECTED : ErrorCode.TRANSPORT_TIMEOUT_PRESEND,
          `call ${name} was not sent: endpoint ${this.endpointId} is ${this.state}`,
          { tool: name, endpoint_id: this.endpointId, sent: false },
        );
      const conn = this.current;
      try {
        return await conn.callTool(name, args, { ...opts, timeoutMs: Math.max(1, deadline - this.clock.now()) });
      } catch (err) {
        // HTTP has no socket to watch: after a request lost mid-flight, check at once whether the endpoint is gone.
        if (err instanceof HostError && err.code === ErrorCode.TRANSPORT_DISCONNECTED && conn.transportKind === 'http')
          void this.check(conn); // owned: `checking`, awaited by close()
        // Nothing left the host on a connection that just died: safe to send on the next one.
        const unsent =
          err instanceof HostError && err.code === ErrorCode.TRANSPORT_DISCONNECTED && err.details.sent === false;
        if (!unsent || this.state === 'closed' || opts.signal?.aborted) throw err;
        if (this.opts.whileAway === 'fail') throw err;
        if (conn === this.current && this.state === 'connected') await conn.closed;
      }
    }
  }

  /** The pre-send refusal of a call made while the endpoint is away (`whileAway: 'fail'`). */
  private away(tool: string): HostError {
    return new HostError(
      ErrorCode.TRANSPORT_DISCONNECTED,
      `call ${tool} was not sent: endpoint ${this.endpointId} is ${this.state === 'closed' ? 'closed' : 'disconnected (reconnecting)'}`,
      { tool, endpoint_id: this.endpointId, sent: false, connection: this.state },
      {
        remediation:
          this.state === 'closed'
            ? 'The host gave up on this endpoint; check it and attach it again.'
            : 'Nothing was sent; the host is reconnecting with backoff. Retry when the endpoint is back.',
        retryable: this.state !== 'closed',
      },
    );
  }

  listTools(): ReturnType<MhsConnection['listTools']> {
    return this.current.listTools();
  }

  stderrTail(): string {
    return this.current.stderrTail();
  }

  refreshManifest(): ReturnType<MhsConnection['refreshManifest']> {
    return this.current.refreshManifest();
  }

  async close(): Promise<void> {
    this.finish(ErrorCode.TRANSPORT_DISCONNECTED, 'closed by host');
    await this.current.close();
    await this.checking;
  }
}

/**
 * Connects like {@link connect} (same refusals; the first connection must succeed) and keeps the
 * connection up with backoff afterwards. `closed` resolves only when the host closes it or it gives
 * up (a terminal refusal such as `MHS.HOST.CONNECTOR_DISABLED`, or `maxAttempts`).
 */
export async function connectWithReconnect(
  row: ConnectorRow,
  opts: ReconnectOptions = {},
): Promise<ReconnectingConnection> {
  return new ReconnectingConnection(await connect(row, { ...opts, closeOnUnreachable: true }), row, opts);
}
