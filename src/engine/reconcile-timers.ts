import type { Clock, TimerHandle } from '../core/index.js';

/**
 * Re-armed reconciliations (issue 16, HOST-091): a command the endpoint had no record of before its deadline is
 * reconciled again when the deadline (plus the transport margin) has passed. The due time is data on the pending
 * command and in its `reconcile` entry, so a restarted host re-arms it from the ledger; this keeps the timers of
 * one engine, at most one per command, and owns the reconciliations they start until they settle.
 */
export class ReconcileTimers {
  private readonly timers = new Map<string, TimerHandle>();
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly clock: Clock,
    private readonly run: (commandId: string) => Promise<void>,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Reconciles `commandId` again at `at` (absolute, on the clock); replaces an earlier timer of that command. */
  schedule(commandId: string, at: number): void {
    const old = this.timers.get(commandId);
    if (old !== undefined) this.clock.clearTimeout(old);
    const h = this.clock.setTimeout(
      () => {
        this.timers.delete(commandId);
        const done = this.run(commandId).catch(this.onError);
        this.running.add(done);
        void done.then(() => this.running.delete(done));
      },
      // +1 ms: the reconciliation must see the deadline as passed, not equal.
      Math.max(0, at - this.clock.now()) + 1,
    );
    this.timers.set(commandId, h);
  }

  /** Drops the timer of `commandId` (its caller reconciles it itself). */
  cancel(commandId: string): void {
    const h = this.timers.get(commandId);
    if (h !== undefined) this.clock.clearTimeout(h);
    this.timers.delete(commandId);
  }

  /** Drops every timer (the engine stops; a restart re-arms them from the ledger) and waits for running ones. */
  async stop(): Promise<void> {
    for (const h of this.timers.values()) this.clock.clearTimeout(h);
    this.timers.clear();
    await Promise.allSettled([...this.running]);
  }
}
