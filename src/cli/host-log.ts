import { pino } from 'pino';
import type { DestinationStream, Logger } from 'pino';
import type { HostError } from '../core/index.js';

/** The log of a long-running host process (`serve`): JSON lines, written synchronously to stderr by default. */
export function createHostLog(dest: DestinationStream = pino.destination({ dest: 2, sync: true })): Logger {
  return pino({ name: 'mhs-host' }, dest);
}

/**
 * Reports a failure no caller sees (HOST-093: a store failure must reach the operator, e.g. a lease renewal the store
 * refused) as one error line with its stable code, details and remediation.
 */
export function logBackgroundError(log: Logger): (err: HostError) => void {
  return (err) =>
    log.error(
      { code: err.code, details: err.details, remediation: err.remediation, retryable: err.retryable },
      err.message,
    );
}
