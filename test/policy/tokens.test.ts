// Guarantees: API tokens are shown once, stored only as hashes, verify to their identity, and stop
// verifying when revoked; names and roles are validated; the same holds on PostgreSQL when
// MHS_TEST_PG_URL is set; the `mhs-host token` CLI adds (printing once), lists and revokes (issue 6 item 5).
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { RealClock, sha256Hex } from '../../src/core/index.js';
import type { Db } from '../../src/ledger/db.js';
import { createTokenStore } from '../../src/policy/tokens.js';
import { cliEntry } from '../helpers/cli-entry.js';
import { openTestDb, openTestPg } from './helpers/test-db.js';

const run = promisify(execFile);
const stores: Array<[string, () => Promise<Db | undefined>]> = [
  ['sqlite', openTestDb],
  ['postgres', openTestPg],
];

describe.each(stores)('token store (%s)', (_name, open) => {
  it('adds, verifies, lists without secrets, revokes', async (t) => {
    const db = await open();
    if (!db) return t.skip();
    const store = createTokenStore(db, new RealClock());
    const a = await store.add('alice', 'operator');
    const b = await store.add('bob', 'client');
    expect(a.token).not.toEqual(b.token);
    expect(await store.verify(a.token)).toEqual({ id: a.id, name: 'alice', role: 'operator' });
    expect(await store.verify(b.token)).toMatchObject({ name: 'bob', role: 'client' });
    expect(await store.verify(a.token + 'x')).toBeNull();
    expect(await store.verify('')).toBeNull();
    const rows = await db.all<Record<string, unknown>>('SELECT * FROM mhs_api_tokens');
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(a.token);
    expect(dump).toContain(sha256Hex(a.token));
    const listed = await store.list();
    expect(listed.map((r) => r.name)).toEqual(['alice', 'bob']);
    expect(JSON.stringify(listed)).not.toContain(sha256Hex(a.token));
    await store.revoke('alice');
    expect(await store.verify(a.token)).toBeNull();
    await store.revoke(b.id);
    expect(await store.verify(b.token)).toBeNull();
    await expect(store.revoke('alice')).rejects.toMatchObject({ code: 'not_found' });
    await db.close();
  });

  it('refuses a duplicate active name and bad input', async (t) => {
    const db = await open();
    if (!db) return t.skip();
    const store = createTokenStore(db, new RealClock());
    await store.add('op1', 'operator');
    await expect(store.add('op1', 'client')).rejects.toMatchObject({ code: 'conflict' });
    await expect(store.add('bad name', 'client')).rejects.toMatchObject({ code: 'validation_error' });
    await expect(store.add('x', 'root' as 'client')).rejects.toMatchObject({ code: 'validation_error' });
    await db.close();
  });
});

describe('mhs-host token CLI', () => {
  it('add prints the token once; list shows it without the secret; revoke stops it verifying', async () => {
    const dbPath = join(mkdtempSync(join(tmpdir(), 'mhs-token-cli-')), 'host.db');
    const cli = (...args: string[]) => run('node', [...cliEntry().args, 'token', ...args, '--db', dbPath]);
    const added = await cli('add', 'carol', '--role', 'operator');
    const token = added.stdout.trim();
    expect(token).toMatch(/^mhst_[A-Za-z0-9_-]{40,}$/);
    const listed = await cli('list', '--json');
    const rows = JSON.parse(listed.stdout) as Array<{ name: string; role: string; revoked_at: string | null }>;
    expect(rows).toMatchObject([{ name: 'carol', role: 'operator', revoked_at: null }]);
    expect(listed.stdout).not.toContain(token);
    await cli('revoke', 'carol');
    const { openDb } = await import('../../src/ledger/index.js');
    const db = await openDb(dbPath);
    expect(await createTokenStore(db, new RealClock()).verify(token)).toBeNull();
    await db.close();
    await expect(cli('add', 'x', '--role', 'root')).rejects.toMatchObject({ code: 1 });
  });
});
