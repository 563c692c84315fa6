import type { Clock, TimerHandle } from '../core/index.js';
import type { AppendOptions, Ledger, LedgerAppend, LedgerEntry } from '../ledger/ledger-types.js';

interface Deferred {
  entry: LedgerAppend;
  resolve: (e: LedgerEntry) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit for the hot path: receipt entries wait (at most `windowMs`) to ride in the same ledger transaction
 * as the next `command.intent`, so a sequential caller pays one durable write per governed call instead of two.
 * Buffered receipts always commit before the intent they ride with (HOST-091 ordering: a device's next command is
 * never sent before the previous receipt is durable).
 */
export class ReceiptBatcher {
  private buffer: Deferred[] = [];
  private timer: TimerHandle | null = null;

  constructor(
    private readonly ledger: Ledger,
    private readonly clock: Clock,
    private readonly windowMs = 1,
  ) {}

  /** Queues a receipt entry; resolves when it is durable. */
  defer(entry: LedgerAppend): Promise<LedgerEntry> {
    return new Promise<LedgerEntry>((resolve, reject) => {
      this.buffer.push({ entry, resolve, reject });
      this.timer ??= this.clock.setTimeout(() => void this.flush(), this.windowMs);
    });
  }

  /**
   * Appends `entry` durably together with every buffered receipt (which come first, in the same commit). With
   * `claimGates`, an effectful intent claims its device gate in the store; when another command holds it, `entry`
   * fails with `MHS.HOST.DEVICE_GATE_CLOSED` and the receipts still commit.
   */
  async append(entry: LedgerAppend, opts: AppendOptions = {}): Promise<LedgerEntry> {
    const taken = this.take();
    if (taken.length) this.settle(taken, this.ledger.appendBatch(taken.map((d) => d.entry)));
    const [sealed] = await this.ledger.appendBatch([entry], opts);
    return sealed as LedgerEntry;
  }

  /** Writes the buffered receipts now. */
  async flush(): Promise<void> {
    const taken = this.take();
    if (taken.length) await this.settle(taken, this.ledger.appendBatch(taken.map((d) => d.entry)));
  }

  private settle(taken: Deferred[], written: Promise<LedgerEntry[]>): Promise<void> {
    return written.then(
      (sealed) => taken.forEach((d, i) => d.resolve(sealed[i] as LedgerEntry)),
      (err: unknown) => {
        for (const d of taken) d.reject(err);
      },
    );
  }

  private take(): Deferred[] {
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
    const taken = this.buffer;
    this.buffer = [];
    return taken;
  }
}
