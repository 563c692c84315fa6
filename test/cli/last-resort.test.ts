// Guarantees (issue 16): serve's last-resort handlers log one pino line with the failure's stable code; an unhandled
// rejection leaves the process up, an uncaught exception (state unknown) exits 1 after its line.
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createHostLog } from '../../src/cli/host-log.js';
import { installLastResort } from '../../src/cli/last-resort.js';
import type { ProcessEvents } from '../../src/cli/last-resort.js';
import { ErrorCode, HostError } from '../../src/core/index.js';

function setup() {
  const lines: Array<Record<string, unknown>> = [];
  const log = createHostLog({ write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) });
  const proc = new EventEmitter();
  const exits: number[] = [];
  installLastResort(log, proc as unknown as ProcessEvents, (c) => void exits.push(c));
  return { lines, proc, exits };
}

describe('last-resort handlers of serve', () => {
  it('log an unhandled rejection with its code and keep the process up', () => {
    const { lines, proc, exits } = setup();
    proc.emit('unhandledRejection', new HostError(ErrorCode.HOST_LEDGER_UNAVAILABLE, 'store locked'));
    proc.emit('unhandledRejection', new Error('no code'));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({
      level: 50,
      code: ErrorCode.HOST_LEDGER_UNAVAILABLE,
      last_resort: 'unhandledRejection',
    });
    expect(lines[1]).toMatchObject({ code: ErrorCode.HOST_INTERNAL });
    expect(exits).toEqual([]);
  });

  it('log an uncaught exception as fatal with its code, then exit 1', () => {
    const { lines, proc, exits } = setup();
    proc.emit('uncaughtException', new TypeError('boom'));
    expect(lines).toEqual([
      expect.objectContaining({ level: 60, code: ErrorCode.HOST_INTERNAL, last_resort: 'uncaughtException' }),
    ]);
    expect(exits).toEqual([1]);
  });
});
