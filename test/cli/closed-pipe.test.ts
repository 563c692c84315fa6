// Guarantees (issue 16, Lifecycle): `mhs-host ledger show` whose reader closes the pipe early (`| head -1`) ends
// quietly with exit 0 and no EPIPE stack trace. Real process, a real SQLite file.
import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { RealClock } from '../../src/core/index.js';
import { openDb, openLedger } from '../../src/ledger/index.js';
import { guardStdout } from '../../src/cli/cli-errors.js';
import { cliEntry, REPO_ROOT } from '../helpers/cli-entry.js';
import { tempDb } from '../server/serve-helpers.js';

describe('a closed stdout pipe', () => {
  it('ends ledger show quietly with exit 0', async () => {
    const path = tempDb();
    const db = await openDb(path);
    const ledger = await openLedger(db, { clock: new RealClock() });
    // Far more output than a pipe buffer holds, so writes continue after the reader is gone.
    const entries = Array.from({ length: 2000 }, (_, i) => ({
      kind: 'evidence.verify' as const,
      scope: 'host-ledger',
      result: { ok: true, count: i, note: 'x'.repeat(100) },
    }));
    await ledger.appendBatch(entries);
    await db.close();

    const entry = cliEntry();
    const child = spawn(entry.command, [...entry.args, 'ledger', 'show', '--db', path], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    await new Promise<void>((r) => child.stdout.once('data', () => r()));
    child.stdout.destroy(); // what `head -1` does after its first line
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    expect(err).not.toContain('EPIPE');
    expect(code).toBe(0);
  }, 60_000);

  it('keeps serve up (ignore), ends a one-shot command (exit 0), exits 1 on other errors', () => {
    const epipe = Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });
    const exits: number[] = [];
    const serveOut = new EventEmitter();
    guardStdout(serveOut, (c) => void exits.push(c), 'ignore');
    serveOut.emit('error', epipe);
    expect(exits).toEqual([]);
    const cliOut = new EventEmitter();
    guardStdout(cliOut, (c) => void exits.push(c), 'exit');
    cliOut.emit('error', epipe);
    expect(exits).toEqual([0]);
    cliOut.emit('error', Object.assign(new Error('other'), { code: 'EIO' }));
    expect(exits).toEqual([0, 1]);
  });
});
