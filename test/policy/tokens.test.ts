// Guarantees: API tokens are shown once, stored only as hashes, verify to their identity, and stop
// verifying when revoked; names and roles are validated (issue 6 item 5).
import { describe, expect, it } from 'vitest';
import { RealClock, sha256Hex } from '../../src/core/index.js';
import { createTokenStore } from '../../src/policy/tokens.js';
import { openTestDb } from './helpers/test-db.js';

describe('token store', () => {
  it('adds, verifies, lists without secrets, revokes', async () => {
    const db = await openTestDb();
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

  it('refuses a duplicate active name and bad input', async () => {
    const db = await openTestDb();
    const store = createTokenStore(db, new RealClock());
    await store.add('op1', 'operator');
    await expect(store.add('op1', 'client')).rejects.toMatchObject({ code: 'conflict' });
    await expect(store.add('bad name', 'client')).rejects.toMatchObject({ code: 'validation_error' });
    await expect(store.add('x', 'root' as 'client')).rejects.toMatchObject({ code: 'validation_error' });
    await db.close();
  });
});
