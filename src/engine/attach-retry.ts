import { ErrorCode, isoAt, toHostError } from '../core/index.js';
import type { Clock, TimerHandle } from '../core/index.js';
import { backoffDelay } from '../mhs/reconnect.js';
import type { BackoffOptions } from '../mhs/reconnect.js';

/** How one enabled connector stands with the engine, as the operator API shows it (issue 16). */
export interface AttachStatus {
  connector_id: string;
  /** `attached`, `connecting` (first attempt under way) or `retrying` (an attempt failed; the next is scheduled). */
  state: 'attached' | 'connecting' | 'retrying';
  /** Failed attempts since the connector was last enabled or attached. */
  attempts: number;
  last_error?: { code: string; message: string; at: string };
  /** When the next attempt starts (ISO), while `retrying`. */
  next_attempt_at?: string;
}

/** Options of {@link AttachRetry}. */
export interface AttachRetryOptions {
  clock: Clock;
  /** Connects and attaches the connector; rejects when it cannot. */
  attempt(connectorId: string): Promise<unknown>;
  /** Default 500 ms doubling up to 15 s, unlimited attempts. */
  backoff?: BackoffOptions;
}

/** Codes after which another attempt cannot help until an operator acts (HOST-068): retrying stops. */
const STOP = new Set<string>([ErrorCode.HOST_CONNECTOR_DISABLED, ErrorCode.HOST_ENDPOINT_UNKNOWN]);

const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 500, maxMs: 15_000, factor: 2 };

/**
 * Owns the attach attempts of a long-running host (issue 16: an endpoint down when `serve` starts is attached when
 * it comes up, without a restart): one attempt at a time per connector, retried with backoff on the injected
 * clock until it attaches, is disabled or the host closes. {@link attach} never rejects; its failures are state.
 */
export class AttachRetry {
  private readonly states = new Map<string, AttachStatus>();
  private readonly timers = new Map<string, TimerHandle>();
  private readonly running = new Map<string, Promise<void>>();
  private closed = false;

  constructor(private readonly o: AttachRetryOptions) {}

  /** Attempts now (or joins the attempt under way); resolves once this attempt is settled. */
  attach(connectorId: string): Promise<void> {
    this.clearTimer(connectorId);
    const current = this.running.get(connectorId);
    if (current) return current;
    const prev = this.states.get(connectorId);
    this.states.set(connectorId, {
      ...prev,
      connector_id: connectorId,
      state: prev ? prev.state : 'connecting',
      attempts: prev?.attempts ?? 0,
    });
    const p = this.run(connectorId).finally(() => this.running.delete(connectorId));
    this.running.set(connectorId, p);
    return p;
  }

  /** Stops retrying `connectorId` (disabled) and forgets its state. */
  cancel(connectorId: string): void {
    this.clearTimer(connectorId);
    this.states.delete(connectorId);
  }

  /** The state of every connector this host tried to attach. */
  status(): AttachStatus[] {
    return [...this.states.values()].map((s) => ({ ...s }));
  }

  /** The newest failure of `connectorId`, if its last attempt failed. */
  lastError(connectorId: string): AttachStatus['last_error'] {
    return this.states.get(connectorId)?.last_error;
  }

  /** Cancels every scheduled attempt (host shutdown). */
  close(): void {
    this.closed = true;
    for (const id of [...this.timers.keys()]) this.clearTimer(id);
  }

  private async run(connectorId: string): Promise<void> {
    try {
      await this.o.attempt(connectorId);
      if (this.states.has(connectorId))
        this.states.set(connectorId, { connector_id: connectorId, state: 'attached', attempts: 0 });
    } catch (err) {
      const e = toHostError(err);
      const prev = this.states.get(connectorId);
      if (!prev || this.closed) return;
      const attempts = prev.attempts + 1;
      const last_error = { code: e.code, message: e.message, at: isoAt(this.o.clock.now()) };
      if (STOP.has(e.code)) {
        this.states.delete(connectorId);
        return;
      }
      const delay = backoffDelay(attempts, this.o.backoff ?? DEFAULT_BACKOFF);
      const next_attempt_at = isoAt(this.o.clock.now() + delay);
      this.states.set(connectorId, {
        connector_id: connectorId,
        state: 'retrying',
        attempts,
        last_error,
        next_attempt_at,
      });
      this.timers.set(
        connectorId,
        this.o.clock.setTimeout(() => {
          this.timers.delete(connectorId);
          void this.attach(connectorId); // owned: attach never rejects
        }, delay),
      );
    }
  }

  private clearTimer(connectorId: string): void {
    const t = this.timers.get(connectorId);
    if (t) this.o.clock.clearTimeout(t);
    this.timers.delete(connectorId);
  }
}
