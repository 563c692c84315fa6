import type { Logger } from 'pino';
import { toHostError } from '../core/index.js';

/** The process events {@link installLastResort} listens to (a seam for tests). */
export interface ProcessEvents {
  on(event: 'unhandledRejection', fn: (reason: unknown) => void): unknown;
  on(event: 'uncaughtException', fn: (err: Error) => void): unknown;
}

/**
 * The last-resort handlers of `serve` (issue 16, HOST-093). Every promise the host starts has an owner; one that
 * still rejects unhandled is logged as one error line with its code (`MHS.HOST.INTERNAL` when it has none) and the
 * process stays up: one lost promise must not end every run and the operator API. An uncaught exception is logged
 * the same way (fatal) and the process exits 1: a synchronous throw may have left an actor half-way through a state
 * change, so state is unknown; durable intents are reconciled by the next start (HOST-091). `exit` is
 * `process.exit` in production.
 */
export function installLastResort(
  log: Logger,
  proc: ProcessEvents = process,
  exit: (code: number) => void = process.exit,
): void {
  proc.on('unhandledRejection', (reason) => {
    const e = toHostError(reason);
    log.error(
      { code: e.code, details: e.details, last_resort: 'unhandledRejection', stack: stackOf(reason) },
      e.message,
    );
  });
  proc.on('uncaughtException', (err) => {
    const e = toHostError(err);
    log.fatal({ code: e.code, details: e.details, last_resort: 'uncaughtException', stack: stackOf(err) }, e.message);
    exit(1);
  });
}

function stackOf(x: unknown): string | undefined {
  return x instanceof Error ? x.stack : undefined;
}
