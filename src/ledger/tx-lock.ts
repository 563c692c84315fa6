import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * An async mutex that knows when the current async context already holds it, so that calls made
 * from inside a transaction run in it instead of waiting for it (which would deadlock).
 */
export class TxLock {
  private tail: Promise<void> = Promise.resolve();
  private readonly als = new AsyncLocalStorage<true>();

  /** True when the caller runs inside {@link TxLock.run} of this lock. */
  held(): boolean {
    return this.als.getStore() === true;
  }

  /** Runs `fn` holding the lock; re-entrant within the same async context. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.held()) return fn();
    let release!: () => void;
    const next = new Promise<void>((r) => (release = r));
    const prev = this.tail;
    this.tail = prev.then(() => next);
    await prev;
    try {
      return await this.als.run(true, fn);
    } finally {
      release();
    }
  }

  /** Runs `fn` outside any holder's context (work that must not join a caller's transaction). */
  detached<T>(fn: () => T): T {
    return this.als.exit(fn);
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
