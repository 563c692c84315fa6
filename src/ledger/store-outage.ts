import { isStoreFailure, ledgerUnavailable } from './ledger-health.js';

/**
 * A store outage as `MHS.HOST.LEDGER_UNAVAILABLE` (retryable, 503 on the REST surface; HOST-093); any other error is
 * returned as it is ({@link isStoreFailure} decides). `extra` joins the details (e.g. `operation`).
 */
export function asStoreOutage(err: unknown, location: string, extra: Record<string, unknown> = {}): unknown {
  return isStoreFailure(err) ? ledgerUnavailable(err, location, extra) : err;
}
