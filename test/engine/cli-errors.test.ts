// Guarantees (issue 16 item 3, "Errors"): failures the CLI and REST used to report as MHS.HOST.INTERNAL carry a
// registered code with a remediation: a `null` task file (CONFIG_INVALID), `ledger export --out` onto an existing
// file and stdout on a full disk (OUTPUT_UNWRITABLE), an unwritable store on POST /v1/runs (LEDGER_UNAVAILABLE,
// 503); `ledger show | head` ends quietly with exit 0 and no stack trace. Real processes, real SQLite files.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, RealClock } from '../../src/core/index.js';
import { openDb, openLedger } from '../../src/ledger/index.js';
import { createOpenwopHost } from '../../src/openwop/host.js';
import { createTokenStore } from '../../src/policy/tokens.js';
import { buildApp } from '../../src/server/app.js';
import { REPO_ROOT, cliEntry } from '../helpers/cli-entry.js';

const dir = mkdtempSync(join(tmpdir(), 'mhs-cli-errors-'));
const dbPath = join(dir, 'host.db');

function run(
  args: string[],
  opts: { stdout?: number | 'pipe'; onStdout?: (child: ReturnType<typeof spawn>) => void } = {},
): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  const e = cliEntry();
  return new Promise((resolve, reject) => {
    const child = spawn(e.command, [...e.args, ...args], {
      cwd: REPO_ROOT,
      stdio: ['ignore', opts.stdout ?? 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
    opts.onStdout?.(child);
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stderr }));
  });
}

beforeAll(async () => {
  const db = await openDb(dbPath);
  const ledger = await openLedger(db, { clock: new RealClock() });
  // Enough entries that `ledger show` outlives a reader that stops after the first chunk.
  await ledger.appendBatch(Array.from({ length: 3000 }, (_, i) => ({ kind: 'error' as const, note: `n${i}` })));
  ledger.dispose();
  await db.close();
});

describe('CLI errors with registered codes', () => {
  it('a task file holding null → MHS.HOST.CONFIG_INVALID with a remediation', async () => {
    const file = join(dir, 'null-task.json');
    writeFileSync(file, 'null');
    const r = await run(['run-task', file, '--db', join(dir, 'task.db')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`error ${ErrorCode.HOST_CONFIG_INVALID}:`);
    expect(r.stderr).not.toContain(ErrorCode.HOST_INTERNAL);
    expect(r.stderr.split('\n')[1]?.trim()).not.toBe('');
  });

  it('ledger export --out onto an existing file → MHS.HOST.OUTPUT_UNWRITABLE; the file is untouched', async () => {
    const file = join(dir, 'already-there.txt');
    writeFileSync(file, 'keep me');
    const r = await run(['ledger', 'export', '--db', dbPath, '--out', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`error ${ErrorCode.HOST_OUTPUT_UNWRITABLE}:`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(readFileSync(file, 'utf8')).toBe('keep me');
  });

  it.runIf(existsSync('/dev/full'))(
    'stdout on a full disk (/dev/full) → MHS.HOST.OUTPUT_UNWRITABLE, exit 1',
    async () => {
      const r = await run(['ledger', 'show', '--db', dbPath], { stdout: openSync('/dev/full', 'w') });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`error ${ErrorCode.HOST_OUTPUT_UNWRITABLE}:`);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    },
  );

  it('ledger show | head: the reader goes away, the command ends quietly with exit 0', async () => {
    const r = await run(['ledger', 'show', '--db', dbPath], {
      onStdout: (child) => child.stdout!.once('data', () => child.stdout!.destroy()),
    });
    expect(r.stderr).toBe('');
    expect(r.code === 0 || r.signal === 'SIGPIPE').toBe(true);
  });
});

describe('POST /v1/runs on an unwritable store', () => {
  it('→ 503 MHS.HOST.LEDGER_UNAVAILABLE, never 500 INTERNAL; nothing half-applied', async () => {
    const clock = new RealClock();
    const db = await openDb(join(dir, 'runs.db'));
    const host = await createOpenwopHost({ db, clock, workflowsDir: false });
    const auth = { authorization: `Bearer ${(await createTokenStore(db, clock).add('c', 'client')).token}` };
    const { app } = await buildApp({ host, auth: createTokenStore(db, clock), clock });
    try {
      await db.exec('PRAGMA query_only = ON'); // SQLite now refuses every write: SQLITE_READONLY
      const res = await app.inject({
        method: 'POST',
        url: '/v1/runs',
        headers: auth,
        payload: { workflowId: 'conformance-noop' },
      });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ error: ErrorCode.HOST_LEDGER_UNAVAILABLE });
      await db.exec('PRAGMA query_only = OFF');
      const list = await app.inject({ method: 'GET', url: '/v1/runs', headers: auth });
      expect(list.json().runs).toEqual([]);
    } finally {
      await app.close();
      await host.close();
      await db.close();
    }
  });
});
