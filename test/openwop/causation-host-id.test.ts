// Guarantees the RFC 0040 host id is stable per store on SQLite and (when MHS_TEST_PG_URL is set) PostgreSQL: a
// generated id is kept across reopenings, a configured id replaces it and is kept, and a bad id is validation_error.
import { afterAll, describe, expect, it } from 'vitest';
import { openDb } from '../../src/ledger/index.js';
import { resolveHostId } from '../../src/openwop/causation/host-id.js';
import { BACKENDS } from '../ledger/helpers.js';
import type { StoreHandle } from '../ledger/helpers.js';

const handles: StoreHandle[] = [];
afterAll(async () => {
  for (const h of handles) await h.cleanup();
});

describe.each(BACKENDS)('host id on $name', (backend) => {
  it('RFC 0040 §D: generated once, kept across reopenings; a configured id replaces it; a bad one is refused', async () => {
    const h = await backend.fresh();
    handles.push(h);
    const open = async <T>(fn: (db: Awaited<ReturnType<typeof openDb>>) => Promise<T>): Promise<T> => {
      const db = await openDb(h.location);
      try {
        return await fn(db);
      } finally {
        await db.close();
      }
    };
    const first = await open((db) => resolveHostId(db));
    expect(first).toMatch(/^mhs-host\/[0-9a-f]{16}$/);
    expect(await open((db) => resolveHostId(db))).toBe(first);
    expect(await open((db) => resolveHostId(db, 'lab.example/host-a'))).toBe('lab.example/host-a');
    expect(await open((db) => resolveHostId(db))).toBe('lab.example/host-a');
    await expect(open((db) => resolveHostId(db, 'has space'))).rejects.toMatchObject({ code: 'validation_error' });
    await expect(open((db) => resolveHostId(db, ''))).rejects.toMatchObject({ code: 'validation_error' });
    expect(await open((db) => resolveHostId(db))).toBe('lab.example/host-a');
  });
});
