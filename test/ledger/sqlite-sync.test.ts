// Guarantees: the store is fsynced on every commit (synchronous=FULL) unless the operator sets MHS_SQLITE_SYNC=normal;
// any other value is refused with MHS.HOST.CONFIG_INVALID before a file is created.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/core/index.js';
import { openDb, SQLITE_SYNC_ENV_VAR } from '../../src/ledger/index.js';

const dir = mkdtempSync(join(tmpdir(), 'mhs-sync-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function level(file: string, env: Record<string, string | undefined>): Promise<number> {
  const db = await openDb(join(dir, file), { env });
  try {
    return ((await db.get<{ synchronous: number }>('PRAGMA synchronous')) as { synchronous: number }).synchronous;
  } finally {
    await db.close();
  }
}

describe('SQLite durability level', () => {
  it('defaults to FULL (2) and takes normal (1) from the environment, in any case', async () => {
    expect(await level('a.db', {})).toBe(2);
    expect(await level('b.db', { [SQLITE_SYNC_ENV_VAR]: 'full' })).toBe(2);
    expect(await level('c.db', { [SQLITE_SYNC_ENV_VAR]: ' Normal ' })).toBe(1);
  });

  it('refuses any other value before creating the file', async () => {
    const file = join(dir, 'bad', 'x.db');
    await expect(openDb(file, { env: { [SQLITE_SYNC_ENV_VAR]: 'off' } })).rejects.toMatchObject({
      code: ErrorCode.HOST_CONFIG_INVALID,
    });
    expect(existsSync(file)).toBe(false);
  });
});
