import type { Clock, TimerHandle } from '../core/index.js';
import type { ApprovalRequest } from './approval-rules.js';
import type { ApprovalStore } from './approval-store.js';

/**
 * Callers waiting for operator decisions. A decision in this process wakes its waiters at once
 * ({@link ApprovalWaiters.notify}); a decision by another host process sharing the store is seen by
 * re-reading every `pollMs`. Waiting never decides anything itself (HOST-043: no fail-open).
 */
export class ApprovalWaiters {
  private readonly waiters = new Map<string, Set<() => void>>();

  constructor(
    private readonly store: ApprovalStore,
    private readonly clock: Clock,
    private readonly pollMs: number,
  ) {}

  /** Wakes every waiter of `approvalId` to re-read the request. */
  notify(approvalId: string): void {
    for (const w of [...(this.waiters.get(approvalId) ?? [])]) w();
  }

  /** Resolves with the request once it leaves `pending`, or `aborted` / `timeout`. */
  wait(
    approvalId: string,
    signal: AbortSignal | undefined,
    timeoutMs: number | null,
  ): Promise<ApprovalRequest | 'aborted' | 'timeout'> {
    return new Promise((resolve) => {
      let done = false;
      let poll: TimerHandle | undefined;
      let limit: TimerHandle | undefined;
      const set = this.waiters.get(approvalId) ?? new Set();
      this.waiters.set(approvalId, set);
      const finish = (v: ApprovalRequest | 'aborted' | 'timeout') => {
        if (done) return;
        done = true;
        set.delete(check);
        if (!set.size) this.waiters.delete(approvalId);
        if (poll) this.clock.clearTimeout(poll);
        if (limit) this.clock.clearTimeout(limit);
        signal?.removeEventListener('abort', onAbort);
        resolve(v);
      };
      const check = () => {
        void this.store.get(approvalId).then(
          (r) => {
            if (r && r.status !== 'pending') finish(r);
          },
          () => undefined,
        );
      };
      const arm = () => {
        poll = this.clock.setTimeout(() => {
          check();
          if (!done) arm();
        }, this.pollMs);
      };
      const onAbort = () => finish('aborted');
      set.add(check);
      if (signal?.aborted) return finish('aborted');
      signal?.addEventListener('abort', onAbort);
      if (timeoutMs !== null) limit = this.clock.setTimeout(() => finish('timeout'), timeoutMs);
      arm();
      check();
    });
  }
}
