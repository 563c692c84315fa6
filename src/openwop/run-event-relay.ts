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

/**
 * A request stored in `run_requests` for the process that drives the run (`q`: stored), or settled by it (`d`), so its
 * sender answers (issue 19). The request itself stays in the table: a notice missed is found again by a sweep.
 */
/** A new run handed by the process that accepted it (`o`) to a less loaded one (`to`), which starts it. */
interface HandOffNotice {
  k: 'n';
  r: string;
  o: string;
  to: string;
}

interface RequestNotice {
  k: 'q' | 'd';
  r: string;
  o: string;
  /** Request id. */
  q: string;
}

type Notice = AppendNotice | RequestNotice | HandOffNotice;

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
    if ((n.k === 'q' || n.k === 'd') && typeof n.q === 'string') return n as unknown as RequestNotice;
    if (n.k === 'n' && typeof n.to === 'string') return n as unknown as HandOffNotice;
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
  /** Applies requests stored for a run, when this process drives it (the run manager's, set once it exists). */
  onRequest: ((runId?: string) => Promise<void>) | undefined;
  /** Another process appended to a run: waits on it here (a parent's wait on a child run) read it again. */
  onAppended: ((runId: string) => void) | undefined;
  /** Starts a new run handed to this process. */
  onHandedOver: ((runId: string) => Promise<void>) | undefined;
  /** Wakes the sender of a settled request, when it waits here. */
  onSettled: ((requestId: string) => void) | undefined;
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

  /** Runs inside the transaction that inserts a run handed to `to`: that process starts it at commit. */
  async handOff(t: Db, runId: string, to: string): Promise<void> {
    const notice: HandOffNotice = { k: 'n', r: runId, o: this.o.origin, to };
    await t.run('SELECT pg_notify(?, ?)', [RUN_EVENTS_CHANNEL, JSON.stringify(notice)]);
  }

  /** Runs inside the transaction that stores a request: the process driving `runId` applies it at commit. */
  async requestStored(t: Db, runId: string, requestId: string): Promise<void> {
    const notice: RequestNotice = { k: 'q', r: runId, o: this.o.origin, q: requestId };
    await t.run('SELECT pg_notify(?, ?)', [RUN_EVENTS_CHANNEL, JSON.stringify(notice)]);
  }

  /** Runs inside the transaction that settles a request: its sender answers at commit. */
  async requestSettled(t: Db, runId: string, requestId: string): Promise<void> {
    const notice: RequestNotice = { k: 'd', r: runId, o: this.o.origin, q: requestId };
    await t.run('SELECT pg_notify(?, ?)', [RUN_EVENTS_CHANNEL, JSON.stringify(notice)]);
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
        // Appends and requests made while no connection listened reached no one: subscribers re-read, requests too.
        for (const runId of this.store.subscribedRuns()) this.track(this.store.relay(runId));
        if (this.onRequest) this.track(this.onRequest());
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
    if (!n || this.closed) return;
    // A request may be settled, or taken over and applied, by the process that sent it: those notices count here too.
    if (n.k === 'd') this.onSettled?.(n.q);
    else if (n.k === 'n') {
      if (n.to === this.o.origin && this.onHandedOver) this.track(this.onHandedOver(n.r));
    } else if (n.k === 'q') {
      if (this.onRequest) this.track(this.onRequest(n.r));
    } else if (n.k === 'e' && n.o !== this.o.origin) {
      this.onAppended?.(n.r);
      this.track(this.store.relay(n.r, n.a));
    }
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
