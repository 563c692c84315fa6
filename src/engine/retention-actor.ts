/**
 * Retention on a schedule (HOST-056): the long-running host prunes its ledger as the policy's `retention` section
 * says, without an operator command. Each run appends the checkpoint a later run may prune up to (unless only
 * retention bookkeeping came since the last one, so an idle ledger stays still), and prunes up to
 * the newest checkpoint the policy allows (ledger and receipt ages), never past the first unsettled command's
 * intent (HOST-091); every prune is one `retention.prune` entry and the chain then anchors on that checkpoint.
 * The due time is data: the last checkpoint's `ts` in the ledger plus `interval_s`, so a restarted host
 * keeps the schedule instead of starting it over. One owned run at a time; `stop()` waits for it.
 */
import { isoAt, toHostError } from '../core/index.js';
import type { Clock, HostError, TimerHandle } from '../core/index.js';
import type { Db } from '../ledger/db.js';
import type { DurableLedger } from '../ledger/ledger-types.js';
import { needsCheckpoint, pruneLedger, retentionCheckpoint, unrecordedPrune } from '../ledger/prune.js';
import type { PruneResult } from '../ledger/prune.js';
import type { RetentionPolicy } from '../policy/policy-config.js';
import { recoveryScan } from './recovery.js';
import type { RecoveryMarkStore } from './recovery-mark.js';

/** The `reason` of the checkpoints the schedule appends. */
export const RETENTION_CHECKPOINT = 'retention.schedule';

/** What one scheduled run did. */
export interface RetentionRun {
  at: string;
  /** Set when entries were pruned. */
  pruned?: PruneResult;
  /** Seq of the checkpoint this run appended (none when nothing but retention bookkeeping came since the last). */
  checkpointSeq?: number;
  /** The first checkpoint of a prune that was not recorded (a crash after the deletion), recorded by this run. */
  recordedLate?: number;
}

export interface RetentionActorOptions {
  db: Db;
  ledger: DurableLedger;
  clock: Clock;
  /** Read at every run, so a changed policy applies at the next one; null: nothing is pruned. */
  policy: () => Promise<RetentionPolicy | null>;
  /** Where recovery starts: every intent below it is settled, so only the tail is scanned. */
  recoveryMark?: RecoveryMarkStore;
  /** A run that failed (the store, the policy): reported, and the schedule goes on. */
  onError?: (err: HostError) => void;
  onRun?: (r: RetentionRun) => void;
}

/** The owned retention schedule of one host process. */
export class RetentionActor {
  private timer: TimerHandle | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly o: RetentionActorOptions) {}

  /** Arms the first run at the recorded due time (the last checkpoint + interval), or now + interval. */
  async start(): Promise<void> {
    try {
      const policy = await this.o.policy();
      if (!policy?.enabled) return this.arm(DEFAULT_RECHECK_MS);
      const last = await this.lastCheckpoint();
      const due = (last ?? this.o.clock.now()) + policy.interval_s * 1000;
      this.arm(Math.max(0, due - this.o.clock.now()));
    } catch (err) {
      this.o.onError?.(toHostError(err));
      this.arm(DEFAULT_RECHECK_MS);
    }
  }

  /** Cancels the next run and waits for one under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) this.o.clock.clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One run now (also what the timer calls). */
  async runOnce(): Promise<RetentionRun | undefined> {
    const policy = await this.o.policy();
    if (!policy?.enabled) return undefined;
    const now = this.o.clock.now();
    // HOST-091: nothing at or after the first unsettled intent goes (its recovery needs it).
    const scan = await recoveryScan(this.o.ledger, this.o.recoveryMark);
    const cp = await retentionCheckpoint(this.o.db, {
      beforeSeq: scan.nextFrom,
      ledgerCutoff: isoAt(now - policy.ledger_s * 1000),
      receiptCutoff: isoAt(now - policy.receipts_s * 1000),
    });
    const run: RetentionRun = { at: isoAt(now) };
    // A prune whose process died before its entry: the deletion is there, so its record is written now.
    const late = await unrecordedPrune(this.o.db, this.o.ledger);
    if (late) {
      await this.o.ledger.append({ kind: 'retention.prune', pruned: null, checkpoint: late, recorded_late: true });
      run.recordedLate = late.seq;
    }
    if (cp)
      run.pruned = await pruneLedger(
        this.o.db,
        this.o.ledger,
        cp.seq,
        { clock: this.o.clock, minAgeMs: policy.ledger_s * 1000 },
        { scheduled: true, policy: { ledger_s: policy.ledger_s, receipts_s: policy.receipts_s } },
      );
    if (await needsCheckpoint(this.o.db))
      run.checkpointSeq = (await this.o.ledger.checkpoint({ reason: RETENTION_CHECKPOINT })).seq;
    this.o.onRun?.(run);
    return run;
  }

  private arm(ms: number): void {
    if (this.stopped) return;
    this.timer = this.o.clock.setTimeout(() => {
      this.timer = undefined;
      this.running = this.tick().finally(() => (this.running = undefined));
    }, ms);
  }

  private async tick(): Promise<void> {
    let next = DEFAULT_RECHECK_MS;
    try {
      await this.runOnce();
      const policy = await this.o.policy();
      if (policy?.enabled) next = policy.interval_s * 1000;
    } catch (err) {
      this.o.onError?.(toHostError(err));
    }
    this.arm(next);
  }

  /** When the last checkpoint (scheduled or an operator's) was written (ms), from the ledger. */
  private async lastCheckpoint(): Promise<number | undefined> {
    const row = await this.o.db.get<{ ts: string }>(
      `SELECT ts FROM ledger_entries WHERE kind = 'checkpoint' ORDER BY seq DESC LIMIT 1`,
    );
    return row ? Date.parse(row.ts) : undefined;
  }
}

/** With retention off or no policy, the policy is looked at again this often (it may be turned on). */
const DEFAULT_RECHECK_MS = 3_600_000;
