import { ErrorCode, HostError, toHostError } from '../core/index.js';
import type { Clock, TimerHandle } from '../core/index.js';
import type { Db, PgListener } from '../ledger/index.js';
import type { OpenwopStore, RunEventNotifier } from './store.js';

/** The PostgreSQL channel every process of one store notifies its appends on (issue 19). */
export const RUN_EVENTS_CHANNEL = 'openwop_run_events';

/** What a notification carries: never the events (a payload holds at most 8 000 bytes), only where they are. */
interface AppendNotice {
  k: 'e';
  /** Run id. */
  r: string;
  /** First and last sequence appended. */
  a: number;
  s: number;
  /** The sending process. */
  o: string;
}

/** A cancel sent to a process that does not drive the run, for the one that does. */
interface CancelNotice {
  k: 'c';
  r: string;
  o: string;
  /** Reason (cut to {@link MAX_REASON} characters) and principal. */
  why: string;
  who: string;
}

type Notice = AppendNotice | CancelNotice;

const MAX_REASON = 1000;

/** The dedicated `LISTEN` connection, as {@link PostgresDb.listen} opens it. */
export type Listen = (channel: string, onNotify: (payload: string) => void) => Promise<PgListener>;

/** The `listen` of a store that has one (PostgreSQL), else undefined. */
export function listenOf(db: Db): Listen | undefined {
  const l = (db as Partial<{ listen: Listen }>).listen;
  return typeof l === 'function' ? l.bind(db) : undefined;
}

function parseNotice(payload: string): Notice | undefined {
  try {
    const n = JSON.parse(payload) as Record<string, unknown>;
    if (typeof n.r !== 'string' || typeof n.o !== 'string') return undefined;
    if (n.k === 'e' && typeof n.a === 'number' && typeof n.s === 'number') return n as unknown as AppendNotice;
    if (n.k === 'c' && typeof n.why === 'string' && typeof n.who === 'string') return n as unknown as CancelNotice;
  } catch {
    // Not ours: ignored.
  }
  return undefined;
}

/**
 * Live events across the processes of one PostgreSQL store (issue 19). Every append `NOTIFY`s its run id and
 * sequences in its transaction; one actor per process `LISTEN`s on a dedicated connection and, for an append made
 * by another process, has the store read the new events and emit them to this process's SSE streams and long polls.
 * A lost connection is reopened with backoff (doubling, up to `maxBackoffMs`), and every run with subscribers then
 * re-reads the store, so a notification missed meanwhile delays no subscriber past the reconnect. Each relay read is
 * owned (awaited on close).
 */
export class RunEventRelay implements RunEventNotifier {
  private closed = false;
  /** Acts on a cancel another process forwarded (the run manager's, set once it exists). */
  onCancel: ((runId: string, reason: string, principal: string) => Promise<void>) | undefined;
  private listener: PgListener | undefined;
  private loop: Promise<void> | undefined;
  private timer: TimerHandle | null = null;
  private wakeBackoff: (() => void) | undefined;
  private readonly reads = new Set<Promise<void>>();
  private readonly minBackoffMs: number;
  private readonly maxBackoffMs: number;
  /** Resolves after the first attempt to connect, whether it listened or failed. */
  private readonly connected: Promise<void>;
  private markConnected: () => void = () => undefined;

  constructor(
    private readonly store: OpenwopStore,
    private readonly listen: Listen,
    private readonly clock: Clock,
    private readonly o: {
      /** This process's id (the run-lease owner): its own notifications are ignored. */
      origin: string;
      onError?: (err: HostError) => void;
      minBackoffMs?: number;
      maxBackoffMs?: number;
    },
  ) {
    this.minBackoffMs = o.minBackoffMs ?? 100;
    this.maxBackoffMs = o.maxBackoffMs ?? 5_000;
    this.connected = new Promise<void>((resolve) => (this.markConnected = resolve));
  }

  async appended(t: Db, runId: string, firstSequence: number, lastSequence: number): Promise<void> {
    const notice: AppendNotice = { k: 'e', r: runId, a: firstSequence, s: lastSequence, o: this.o.origin };
    await t.run('SELECT pg_notify(?, ?)', [RUN_EVENTS_CHANNEL, JSON.stringify(notice)]);
  }

  /**
   * Tells every process of the store that `runId` is to be cancelled; the one that drives it does (a `NOTIFY`,
   * not stored: a cancel sent while the owner is between processes is lost, and the client may send it again).
   */
  async forwardCancel(runId: string, reason: string, principal: string): Promise<void> {
    const notice: CancelNotice = {
      k: 'c',
      r: runId,
      o: this.o.origin,
      why: reason.slice(0, MAX_REASON),
      who: principal,
    };
    await this.store.db.run('SELECT pg_notify(?, ?)', [RUN_EVENTS_CHANNEL, JSON.stringify(notice)]);
  }

  /** Starts listening; resolves after the first attempt to connect (a failed one is retried in the background). */
  async start(): Promise<void> {
    this.loop ??= this.run();
    await Promise.race([this.connected, this.loop]);
  }

  private async run(): Promise<void> {
    let backoff = this.minBackoffMs;
    while (!this.closed) {
      try {
        this.listener = await this.listen(RUN_EVENTS_CHANNEL, (p) => this.onNotify(p));
        backoff = this.minBackoffMs;
        if (this.closed) {
          await this.listener.close();
          break;
        }
        // Appends made while no connection listened reached no one: subscribers re-read.
        for (const runId of this.store.subscribedRuns()) this.track(this.store.relay(runId));
        this.markConnected();
        const err = await this.listener.ended;
        this.listener = undefined;
        if (!err || this.closed) break;
        this.o.onError?.(this.lost(err));
      } catch (err) {
        this.o.onError?.(this.lost(err));
        // The first attempt failed: start-up goes on, and the loop keeps trying.
        this.markConnected();
      }
      if (this.closed) break;
      await this.sleep(backoff);
      backoff = Math.min(this.maxBackoffMs, backoff * 2);
    }
  }

  private lost(err: unknown): HostError {
    const cause = toHostError(err);
    return new HostError(ErrorCode.HOST_LEDGER_UNAVAILABLE, 'the run-event notification channel was lost', {
      channel: RUN_EVENTS_CHANNEL,
      cause: cause.message,
    });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      this.wakeBackoff = resolve;
      this.timer = this.clock.setTimeout(() => {
        this.timer = null;
        resolve();
      }, ms);
    });
  }

  private onNotify(payload: string): void {
    const n = parseNotice(payload);
    if (!n || n.o === this.o.origin || this.closed) return;
    if (n.k === 'e') this.track(this.store.relay(n.r, n.a));
    else if (this.onCancel) this.track(this.onCancel(n.r, n.why, n.who));
  }

  private track(p: Promise<void>): void {
    const owned = p.catch((err: unknown) => this.o.onError?.(toHostError(err)));
    this.reads.add(owned);
    void owned.finally(() => this.reads.delete(owned));
  }

  /** Stops listening and waits for the relay reads in flight. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
    this.wakeBackoff?.();
    await this.listener?.close();
    await this.loop;
    await Promise.all(this.reads);
  }
}
