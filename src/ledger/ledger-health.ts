import { ErrorCode, HostError, isoAt } from '../core/index.js';
import type { Clock } from '../core/index.js';
import type { LedgerStatus } from './ledger-types.js';

/** Wraps a store failure as `MHS.HOST.LEDGER_UNAVAILABLE` (HOST-093), keeping the cause; `extra` joins the details. */
export function ledgerUnavailable(err: unknown, location: string, extra: Record<string, unknown> = {}): HostError {
  if (err instanceof HostError && err.code === ErrorCode.HOST_LEDGER_UNAVAILABLE) return err;
  const e = err as { code?: unknown; message?: unknown } | null;
  const cause = typeof e?.message === 'string' ? e.message : String(err);
  return new HostError(
    ErrorCode.HOST_LEDGER_UNAVAILABLE,
    `the ledger store cannot be written: ${cause}`,
    { location, ...extra, ...(typeof e?.code === 'string' ? { store_code: e.code } : {}) },
    {
      remediation:
        'Fix the store (permissions, disk space, database server); new commands are refused until a probe succeeds.',
      retryable: true,
      cause: err,
    },
  );
}

// File system and socket errors of a store that cannot be reached or written.
const STORE_ERRNO = new Set([
  'ENOSPC',
  'EDQUOT',
  'EROFS',
  'EACCES',
  'EPERM',
  'EIO',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
]);
// SQLite result codes of a store that cannot be written; constraint and misuse errors are not outages.
const SQLITE_OUTAGE = /^SQLITE_(READONLY|FULL|BUSY|LOCKED|IOERR|CANTOPEN|PERM|CORRUPT|NOTADB|AUTH|PROTOCOL)/;
// PostgreSQL classes 08 (connection), 53 (insufficient resources), 57P (shutdown), 25006 (read-only transaction).
const PG_OUTAGE = /^(08|53|57P|25006)/;

/**
 * True when `err` says the store cannot be written (read-only, full, locked, unreachable), the cases that are
 * `MHS.HOST.LEDGER_UNAVAILABLE` (HOST-093); false for an error of the data or of the caller.
 */
export function isStoreFailure(err: unknown): boolean {
  if (err instanceof HostError) return err.code === ErrorCode.HOST_LEDGER_UNAVAILABLE;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return STORE_ERRNO.has(code) || SQLITE_OUTAGE.test(code) || PG_OUTAGE.test(code);
}

/** Availability of the store with change notification (HOST-093). */
export class LedgerHealth {
  private state: LedgerStatus;
  private readonly listeners = new Set<(s: LedgerStatus) => void>();

  constructor(
    private readonly clock: Clock,
    _location: string,
  ) {
    this.state = { state: 'available', since: isoAt(clock.now()) };
  }

  current(): LedgerStatus {
    return { ...this.state };
  }

  subscribe(fn: (s: LedgerStatus) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  ok(): void {
    if (this.state.state === 'available') return;
    this.set({ ...this.state, state: 'available', since: isoAt(this.clock.now()) });
  }

  fail(err: HostError): void {
    const at = isoAt(this.clock.now());
    const last_error = { code: err.code, message: err.message, at };
    // Still unavailable: keep the newest error, but only a change of state is announced.
    if (this.state.state === 'unavailable') this.state = { ...this.state, last_error };
    else this.set({ state: 'unavailable', since: at, last_error });
  }

  private set(s: LedgerStatus): void {
    this.state = s;
    for (const fn of this.listeners) {
      try {
        fn(this.current());
      } catch {
        // A listener's fault must not stop the ledger.
      }
    }
  }
}
