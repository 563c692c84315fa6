import { Subject, from, groupBy, mergeMap, concatMap, takeUntil } from 'rxjs';
import type { Subscription } from 'rxjs';
import { ErrorCode, HostError } from '../core/index.js';

interface Job {
  key: string;
  run: () => Promise<unknown>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  started: boolean;
}

/** Options of a {@link CommandLane}. */
export interface CommandLaneOptions {
  endpointId: string;
  /** Most jobs queued or running at once on this lane; one more is refused with `MHS.LIMIT.RATE` (HOST-082). */
  maxPending?: number;
}

/** Live figures of a lane. */
export interface LaneStats {
  pending: number;
  running: number;
  maxRunning: number;
  refused: number;
}

/**
 * The command lane of one endpoint (HOST-082): an RxJS pipeline grouped by device, each device's jobs run
 * serially, devices run side by side, and the whole lane holds at most `maxPending` jobs. Lanes of different
 * endpoints share nothing, so a slow, stalled or reconnecting endpoint never delays another.
 */
export class CommandLane {
  readonly endpointId: string;
  private readonly maxPending: number;
  private readonly jobs = new Subject<Job>();
  private readonly stop$ = new Subject<void>();
  private readonly sub: Subscription;
  private readonly queued = new Set<Job>();
  private closed = false;
  private readonly s: LaneStats = { pending: 0, running: 0, maxRunning: 0, refused: 0 };

  constructor(opts: CommandLaneOptions) {
    this.endpointId = opts.endpointId;
    this.maxPending = opts.maxPending ?? 64;
    this.sub = this.jobs
      .pipe(
        groupBy((j) => j.key),
        mergeMap((group) => group.pipe(concatMap((job) => from(this.execute(job))))),
        takeUntil(this.stop$),
      )
      .subscribe();
  }

  /**
   * Runs `run` on the serial lane of `key` (a device id). Rejects with `MHS.LIMIT.RATE` (retryable, nothing
   * sent) when the lane is full, and with `MHS.TRANSPORT.DISCONNECTED` for jobs still queued when it closes.
   */
  submit<T>(key: string, run: () => Promise<T>): Promise<T> {
    if (this.closed) {
      return Promise.reject(
        new HostError(ErrorCode.TRANSPORT_DISCONNECTED, `lane of ${this.endpointId} is closed`, {
          endpoint_id: this.endpointId,
          sent: false,
        }),
      );
    }
    if (this.s.pending >= this.maxPending) {
      this.s.refused++;
      return Promise.reject(
        new HostError(
          ErrorCode.LIMIT_RATE,
          `command lane of ${this.endpointId} is full (${this.maxPending} pending)`,
          { endpoint_id: this.endpointId, limit: this.maxPending, sent: false },
          { remediation: 'Retry later; the endpoint is busy or stalled.', retryable: true },
        ),
      );
    }
    return new Promise<T>((resolve, reject) => {
      const job: Job = { key, run, resolve: resolve as (v: unknown) => void, reject, started: false };
      this.s.pending++;
      this.queued.add(job);
      this.jobs.next(job);
    });
  }

  private async execute(job: Job): Promise<void> {
    if (!this.queued.delete(job)) return; // rejected at close
    job.started = true;
    this.s.running++;
    this.s.maxRunning = Math.max(this.s.maxRunning, this.s.running);
    try {
      job.resolve(await job.run());
    } catch (e) {
      job.reject(e);
    } finally {
      this.s.running--;
      this.s.pending--;
    }
  }

  /** Figures for tests and the bench. */
  stats(): Readonly<LaneStats> {
    return { ...this.s };
  }

  /** Closes the lane: queued jobs are rejected as not sent; running ones finish on their own. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const job of this.queued) {
      this.s.pending--;
      job.reject(
        new HostError(ErrorCode.TRANSPORT_DISCONNECTED, `lane of ${this.endpointId} closed before send`, {
          endpoint_id: this.endpointId,
          sent: false,
        }),
      );
    }
    this.queued.clear();
    this.stop$.next();
    this.sub.unsubscribe();
  }
}
