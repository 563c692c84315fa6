// `mhs-host ledger …` end to end in fresh processes (issue 4): show prints a seq range readably
// (store named by MHS_HOST_DB), export writes a package that verify accepts (exit 0) and records an
// evidence.export entry; the store location follows --db, then
// MHS_HOST_DB, then ./.mhs-host/host.db, and PostgreSQL URLs never show their password.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../src/core/index.js';
import { DEFAULT_DB_PATH, isPostgresLocation, redactUrl, resolveDbLocation } from '../../src/ledger/index.js';
import { fillSampleStore, openStore, runCli, tempDir } from './helpers.js';

let t: { dir: string; cleanup: () => void };
let dbPath: string;

beforeAll(async () => {
  t = tempDir('mhs-ledger-cli-');
  dbPath = join(t.dir, 'host.db');
  const clock = new SimulatedClock();
  const { db, ledger } = await openStore(dbPath, clock);
  await fillSampleStore(db, clock, ledger);
  await db.close();
});
afterAll(() => t.cleanup());

describe('store location', () => {
  it('--db wins over MHS_HOST_DB, which wins over the default', () => {
    expect(resolveDbLocation({ flag: 'a.db', env: { MHS_HOST_DB: 'b.db' } })).toBe('a.db');
    expect(resolveDbLocation({ env: { MHS_HOST_DB: 'postgres://u:p@h/db' } })).toBe('postgres://u:p@h/db');
    expect(resolveDbLocation({ flag: ' ', env: {} })).toBe(DEFAULT_DB_PATH);
    expect(isPostgresLocation('postgresql://h/db')).toBe(true);
    expect(isPostgresLocation('./x.db')).toBe(false);
    expect(redactUrl('postgres://u:secret@h:5432/db?schema=s')).not.toContain('secret');
  });
});

describe('mhs-host ledger', () => {
  it('show and export, then verify, each in a fresh process', async () => {
    const out = join(t.dir, 'pkg');
    const [readable, exported] = await Promise.all([
      runCli(['ledger', 'show', '--from', '1', '--to', '3'], { MHS_HOST_DB: dbPath }),
      runCli(['ledger', 'export', '--db', dbPath, '--out', out]),
    ]);
    expect(readable.code).toBe(0);
    const lines = readable.stdout.trim().split('\n');
    expect(lines.slice(0, 3).map((l) => l.split(/\s+/)[0])).toEqual(['#1', '#2', '#3']);
    expect(lines[0]).toMatch(/session\.open/);
    expect(exported.code).toBe(0);

    const verified = await runCli(['ledger', 'verify', out]);
    expect(verified.code).toBe(0);
    const { db, ledger } = await openStore(dbPath);
    const head = await ledger.head();
    expect(head).toMatchObject({ kind: 'evidence.export', status: 'verified' });
    await db.close();
  }, 120_000);
});
