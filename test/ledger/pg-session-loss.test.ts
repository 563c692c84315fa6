// Guarantee (fault test, PostgreSQL; skipped without MHS_TEST_PG_URL): a transaction whose session the server ends
// while it is held (idle_in_transaction_session_timeout after a stall) fails with an error the caller sees; the
// process does not crash on the client's 'error' event, nothing of the transaction is kept, and the store keeps
// working on a fresh connection.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresDb } from '../../src/ledger/postgres-db.js';
import { PG_URL, postgresBackend } from './helpers.js';
import type { StoreHandle } from './helpers.js';

describe.skipIf(!PG_URL)('a PostgreSQL session ended inside a transaction', () => {
  let h: StoreHandle;
  let db: PostgresDb;
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown): void => void uncaught.push(err);

  beforeAll(async () => {
    h = await postgresBackend.fresh();
    db = await PostgresDb.open(h.location, { idleInTransactionMs: 200, max: 1 });
    await db.exec('CREATE TABLE t (v integer)');
    process.prependListener('uncaughtException', onUncaught);
  });
  afterAll(async () => {
    process.removeListener('uncaughtException', onUncaught);
    await db?.close();
    await h?.cleanup();
  });

  it('fails the transaction, keeps nothing of it, and the next transaction works', async () => {
    const stalled = db.tx(async (t) => {
      await t.run('INSERT INTO t (v) VALUES (?)', [1]);
      // Idle inside the transaction past the server's limit: the server ends the session.
      await new Promise((r) => setTimeout(r, 1_000));
      await t.run('INSERT INTO t (v) VALUES (?)', [2]);
    });
    await expect(stalled).rejects.toThrow();
    expect(uncaught).toEqual([]);
    await db.tx((t) => t.run('INSERT INTO t (v) VALUES (?)', [3]));
    expect(await db.all<{ v: number }>('SELECT v FROM t ORDER BY v')).toEqual([{ v: 3 }]);
  });
});
