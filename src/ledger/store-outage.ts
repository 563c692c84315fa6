import { ErrorCode, HostError } from '../core/index.js';
import { ledgerUnavailable } from './ledger-health.js';

// SQLite result codes of a store that cannot be written now (locked, read-only, full, I/O), and PostgreSQL's
// connection (08), resource (53, e.g. 53100 disk full) and shutdown (57P) classes, plus socket errors (HOST-093).
const SQLITE = /^SQLITE_(BUSY|LOCKED|READONLY|FULL|IOERR|CANTOPEN|PROTOCOL)/;
const POSTGRES = /^(08|53|57P)/;
const SOCKET = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'ENOSPC', 'EROFS', 'EACCES']);

/** True when `err` says the store is unavailable (not that the request was wrong), see HOST-093. */
export function isStoreOutage(err: unknown): boolean {
  if (err instanceof HostError) return err.code === ErrorCode.HOST_LEDGER_UNAVAILABLE;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return SQLITE.test(code) || POSTGRES.test(code) || SOCKET.has(code);
}

/**
 * A store outage as `MHS.HOST.LEDGER_UNAVAILABLE` (retryable, 503 on the REST surface); any other error is
 * returned as it is. `extra` joins the details (e.g. `operation`).
 */
export function asStoreOutage(err: unknown, location: string, extra: Record<string, unknown> = {}): unknown {
  return isStoreOutage(err) ? ledgerUnavailable(err, location, extra) : err;
}
