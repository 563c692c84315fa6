import type { Clock, TimerHandle } from '../core/index.js';
import type { Ledger, LedgerAppend, LedgerEntry } from '../ledger/ledger-types.js';

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

  /** Appends `entry` durably together with every buffered receipt (which come first). */
  async append(entry: LedgerAppend): Promise<LedgerEntry> {
    const taken = this.take();
    if (!taken.length) return this.ledger.append(entry);
    try {
      const sealed = await this.ledger.appendBatch([...taken.map((d) => d.entry), entry]);
      taken.forEach((d, i) => d.resolve(sealed[i] as LedgerEntry));
      return sealed[taken.length] as LedgerEntry;
    } catch (err) {
      for (const d of taken) d.reject(err);
      throw err;
    }
  }

  /** Writes the buffered receipts now. */
  async flush(): Promise<void> {
    const taken = this.take();
    if (!taken.length) return;
    try {
      const sealed = await this.ledger.appendBatch(taken.map((d) => d.entry));
      taken.forEach((d, i) => d.resolve(sealed[i] as LedgerEntry));
    } catch (err) {
      for (const d of taken) d.reject(err);
    }
  }

  private take(): Deferred[] {
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
    const taken = this.buffer;
    this.buffer = [];
    return taken;
  }
}
