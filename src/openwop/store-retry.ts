import { ErrorCode, HostError } from '../core/index.js';
import type { Clock } from '../core/index.js';
import { RunHalted } from './run-context.js';

/** Options of {@link untilStoreBack}. */
export interface StoreRetryOptions {
  clock: Clock;
  /** Ends the wait (host shutdown): rejects with `RunHalted`; the run resumes from its log on the next start. */
  signal: AbortSignal;
  /** Told once per outage, at its first refused attempt. */
  onOutage?: (err: HostError) => void;
  /** First delay (default 250 ms), doubled up to `maxMs` (default 5 s). */
  initialMs?: number;
  maxMs?: number;
}

function isUnavailable(err: unknown): err is HostError {
  return err instanceof HostError && err.code === ErrorCode.HOST_LEDGER_UNAVAILABLE;
}

/**
 * Runs `fn` (one store transaction) until it commits (issue 16, HOST-093): while the store is unavailable the
 * attempt is repeated with backoff, so a run's next event is delayed, never lost, and the run goes on when the store
 * recovers. A refused transaction wrote nothing, so repeating it is safe. Other errors are rethrown at once.
 */
export async function untilStoreBack<T>(fn: () => Promise<T>, o: StoreRetryOptions): Promise<T> {
  let delay = o.initialMs ?? 250;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!isUnavailable(err)) throw err;
      if (o.signal.aborted) throw new RunHalted('halted while the store was unavailable');
      if (attempt === 1) o.onOutage?.(err);
      await new Promise<void>((resolve) => {
        const t = o.clock.setTimeout(done, delay);
        function done(): void {
          o.clock.clearTimeout(t);
          o.signal.removeEventListener('abort', done);
          resolve();
        }
        o.signal.addEventListener('abort', done, { once: true });
      });
      delay = Math.min(o.maxMs ?? 5_000, delay * 2);
    }
  }
}
