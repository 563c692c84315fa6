// Durability under a crash (HOST-093, issue 4 acceptance): a child appending a stream of entries is
// killed with SIGKILL mid-stream; after reopening, the chain verifies and every entry the child
// reported as committed is present with the same digest (no torn, missing or forked entry). Two
// processes appending to one store at once leave one unforked chain.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { entryArgs } from '../helpers/cli-entry.js';
import { BACKENDS, REPO, openStore } from './helpers.js';
import type { StoreHandle } from './helpers.js';

describe.each(BACKENDS)('crash: $name', (backend) => {
  const handles: StoreHandle[] = [];
  afterEach(async () => {
    for (const h of handles.splice(0)) await h.cleanup();
  });

  it('HOST-093: SIGKILL during appends loses no committed entry and leaves a verifying chain', async () => {
    const h = await backend.fresh();
    handles.push(h);
    const child = spawn(process.execPath, [...entryArgs('test/ledger/fixtures/append-child.ts'), h.location], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const committed = new Map<number, string>();
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_c, sig) => resolve(sig)));
    const lines = createInterface({ input: child.stdout });
    await new Promise<void>((resolve) => {
      lines.on('line', (line) => {
        const [seq, digest] = line.split(' ');
        if (digest) committed.set(Number(seq), digest);
        // Kill at an arbitrary point well inside the stream.
        if (committed.size >= 300 + (process.pid % 97)) {
          child.kill('SIGKILL');
          resolve();
        }
      });
      lines.on('close', () => resolve());
    });
    expect(await exited).toBe('SIGKILL');
    expect(committed.size).toBeGreaterThanOrEqual(300);

    const { db, ledger } = await openStore(h.location);
    try {
      expect(await ledger.verify()).toMatchObject({ ok: true });
      const all = await ledger.range(0);
      expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i));
      const bySeq = new Map(all.map((e) => [e.seq, e.digest]));
      for (const [seq, digest] of committed) expect(bySeq.get(seq)).toBe(digest);
      // And the store takes new appends after the crash.
      const next = await ledger.append({ kind: 'error', note: 'after crash' });
      expect(next.seq).toBe(all.length);
    } finally {
      await db.close();
    }
  }, 120_000);

  it('HOST-092: two processes appending to one store at once never fork the chain', async () => {
    const h = await backend.fresh();
    handles.push(h);
    // Create the schema first so both children only append.
    const first = await openStore(h.location);
    await first.db.close();
    const runChild = () =>
      new Promise<string[]>((resolve, reject) => {
        const child = spawn(
          process.execPath,
          [...entryArgs('test/ledger/fixtures/append-child.ts'), h.location, '150'],
          {
            cwd: REPO,
            stdio: ['ignore', 'pipe', 'inherit'],
          },
        );
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.on('error', reject);
        child.on('close', (code) =>
          code === 0 ? resolve(out.trim().split('\n').slice(1)) : reject(new Error(`exit ${code}`)),
        );
      });
    const [a, b] = await Promise.all([runChild(), runChild()]);
    const reported = [...a, ...b].map((l) => Number(l.split(' ')[0]));
    expect(new Set(reported).size).toBe(reported.length);
    const { db, ledger } = await openStore(h.location);
    try {
      const all = await ledger.range(0);
      expect(all.length).toBe(1 + reported.length);
      expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i));
      expect(await ledger.verify()).toMatchObject({ ok: true, count: all.length });
    } finally {
      await db.close();
    }
  }, 120_000);
});
