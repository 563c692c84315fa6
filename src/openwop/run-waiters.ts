/**
 * Waits on runs this process does not drive (issue 19): each is released when the run's driver appends (a relayed
 * notification), when this process's actor for it ends, or after a lease sweep (a notification missed); the waiter
 * then reads the store again.
 */
export class RunWaiters {
  private readonly waiting = new Map<string, Array<() => void>>();

  /** Resolves at the next {@link wake} of `runId` (or of every run). */
  next(runId: string): Promise<void> {
    return new Promise<void>((resolve) => {
      const list = this.waiting.get(runId) ?? [];
      list.push(resolve);
      this.waiting.set(runId, list);
    });
  }

  has(runId: string): boolean {
    return this.waiting.has(runId);
  }

  wake(runId: string): void {
    for (const w of this.waiting.get(runId) ?? []) w();
    this.waiting.delete(runId);
  }

  wakeAll(): void {
    for (const runId of [...this.waiting.keys()]) this.wake(runId);
  }
}
