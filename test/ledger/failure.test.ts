// Store failures surface to the caller (HOST-093): a write-protected SQLite file opens for reading
// but every append rejects with MHS.HOST.LEDGER_UNAVAILABLE and the status says unavailable; a full
// store (SQLite max_page_count) does the same and recovers once space returns; an unreachable
// PostgreSQL fails openDb with the same code. Nothing is half-written.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode, HostError } from '../../src/core/index.js';
import { openDb } from '../../src/ledger/index.js';
import { entryArgs } from '../helpers/cli-entry.js';
import { REPO, openStore, tempDir } from './helpers.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function runChild(
  path: string,
  opts: { uid?: number; env?: Record<string, string> } = {},
): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...entryArgs('test/ledger/fixtures/readonly-child.ts'), path], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, ...(opts.uid !== undefined ? { HOME: '/tmp' } : {}), ...opts.env },
      ...(opts.uid !== undefined ? { uid: opts.uid, gid: opts.uid } : {}),
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', () => resolve(JSON.parse(out.trim() || '{}') as Record<string, unknown>));
  });
}

/** True when an unprivileged user (nobody) can read the repository, so the child can run as it. */
function nobodyCanReadRepo(): boolean {
  const r = spawnSync(
    process.execPath,
    ['-e', `require('fs').accessSync(${JSON.stringify(join(REPO, 'node_modules/tsx/package.json'))})`],
    {
      uid: 65534,
      gid: 65534,
    },
  );
  return r.status === 0;
}

describe('ledger store failures', () => {
  it('HOST-093: a read-only ledger file yields MHS.HOST.LEDGER_UNAVAILABLE, visible to the caller', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const path = join(t.dir, 'host.db');
    const { db, ledger } = await openStore(path);
    await ledger.append({ kind: 'session.open', session_id: 'ses_1' });
    await db.close();
    chmodSync(path, 0o444);
    // root ignores file modes, so the child drops to an unprivileged user that owns the folder;
    // where that user cannot reach the repository, the child opens the file read-only itself.
    const root = process.getuid?.() === 0;
    let r: Record<string, unknown>;
    if (!root) r = await runChild(path);
    else if (nobodyCanReadRepo()) {
      chownSync(t.dir, 65534, 65534);
      r = await runChild(path, { uid: 65534 });
    } else r = await runChild(path, { env: { MHS_TEST_SQLITE_READONLY: '1' } });
    expect(r['open_error']).toBeUndefined();
    expect(r['head_seq']).toBe(1);
    expect(r['status_on_open']).toBe('unavailable');
    expect(r['append']).toBe(ErrorCode.HOST_LEDGER_UNAVAILABLE);
    expect(r['status']).toMatchObject({
      state: 'unavailable',
      last_error: { code: ErrorCode.HOST_LEDGER_UNAVAILABLE },
    });
    expect(r['verify']).toMatchObject({ ok: true, count: 2 });
  }, 120_000);

  it('HOST-093: a full store rejects appends with LEDGER_UNAVAILABLE and recovers when space returns', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const { db, ledger } = await openStore(join(t.dir, 'host.db'));
    await ledger.append({ kind: 'error', note: 'fits' });
    const pages = (await db.get<{ page_count: number }>('PRAGMA page_count'))?.page_count as number;
    await db.exec(`PRAGMA max_page_count = ${pages}`);
    const big = 'x'.repeat(200_000);
    await expect(ledger.append({ kind: 'tool_call', command_id: 'cmd_big', blob: big })).rejects.toMatchObject({
      code: ErrorCode.HOST_LEDGER_UNAVAILABLE,
    });
    expect(ledger.status().state).toBe('unavailable');
    await db.exec('PRAGMA max_page_count = 1073741823');
    expect((await ledger.probe()).state).toBe('available');
    const e = await ledger.append({ kind: 'tool_call', command_id: 'cmd_big', blob: big });
    expect(e.seq).toBe(2);
    expect(await ledger.verify()).toMatchObject({ ok: true, count: 3 });
    await db.close();
  });

  it('HOST-093: an unreachable PostgreSQL fails openDb with LEDGER_UNAVAILABLE', async () => {
    const err = await openDb('postgres://postgres:secretpw@127.0.0.1:1/none', {
      postgres: { connectionTimeoutMs: 2000 },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HostError);
    expect((err as HostError).code).toBe(ErrorCode.HOST_LEDGER_UNAVAILABLE);
    // The password never reaches the error.
    expect(JSON.stringify((err as HostError).details)).not.toContain('secretpw');
    expect((err as HostError).message).not.toContain('secretpw');
  });
});
