/**
 * An async mutex (FIFO). Work inside a transaction runs on the transaction's own handle, never through the
 * lock again, so there is nothing to re-enter and no async-context tracking: `AsyncLocalStorage` would put a
 * hook on every promise of the process on Node 20, the MCP client's included.
 */
export class TxLock {
  private tail: Promise<void> = Promise.resolve();

  /** Runs `fn` holding the lock. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    let release!: () => void;
    const next = new Promise<void>((r) => (release = r));
    const prev = this.tail;
    this.tail = next;
    await prev;
    try {
      return await fn();
    } finally {
      release();
    }
  }
}

const fileLocks = new Map<string, TxLock>();

/** One lock per SQLite file in this process: two handles on one file must not hold write locks at once. */
export function lockForFile(realPath: string): TxLock {
  let lock = fileLocks.get(realPath);
  if (!lock) {
    lock = new TxLock();
    fileLocks.set(realPath, lock);
  }
  return lock;
}
