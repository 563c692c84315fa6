// Issue 20 item 4: an endpoint's inline bearer token never sits in the store's bytes. It is sealed with the host
// secret key (AES-256-GCM) in a real SQLite file (scanned byte for byte, WAL included) and in a real PostgreSQL
// table (its raw column read back); it opens again with the same key, fails with a registered code under another
// key, and is never printed by `mhs-host endpoints show`.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode, SimulatedClock } from '../../src/core/index.js';
import type { Db } from '../../src/ledger/db.js';
import { openConnectorStore } from '../../src/policy/connector-store.js';
import type { DiscoveredRow } from '../../src/policy/connector-store.js';
import { openSecretBox } from '../../src/policy/secret-box.js';
import { runCli } from '../ledger/helpers.js';
import { openTestDb, openTestPg } from './helpers/test-db.js';

const TOKEN = `tok-${randomBytes(12).toString('hex')}`;
const clock = new SimulatedClock();
const open: Db[] = [];
afterEach(async () => {
  for (const d of open.splice(0)) await d.close();
});

const row = (token = TOKEN): DiscoveredRow => ({
  connector_id: 'mhs-guarded',
  transport: 'http',
  url: 'http://127.0.0.1:9/mcp',
  base_url: 'http://127.0.0.1:9',
  endpoint_id: 'mhs://guarded:1',
  source: { kind: 'file', ref: '/etc/mhs/endpoints.json' },
  seen_in: [{ kind: 'file', ref: '/etc/mhs/endpoints.json' }],
  auth: { scheme: 'bearer', token },
  descriptor: null,
});

/** Every byte of the store's files (the database, its WAL and journal) as one buffer. */
function storeBytes(location: string): Buffer {
  const dir = dirname(location);
  return Buffer.concat(
    readdirSync(dir)
      .filter((f) => f.startsWith('host.db'))
      .map((f) => readFileSync(join(dir, f))),
  );
}

describe('credentials at rest (SQLite file)', () => {
  it('an inline bearer token is sealed: absent from the file bytes, opened again with the key', async () => {
    const db = await openTestDb();
    open.push(db);
    const store = await openConnectorStore(db, { clock });
    await store.upsertDiscovered(row());
    expect((await store.get('mhs-guarded'))?.auth).toEqual({ scheme: 'bearer', token: TOKEN });
    const raw = await db.get<{ auth: string }>('SELECT auth FROM connector_rows');
    expect(raw?.auth).not.toContain(TOKEN);
    expect(storeBytes(db.location).includes(Buffer.from(TOKEN))).toBe(false);
    // The key file was created beside the store, readable by its owner only.
    const keyFile = join(dirname(db.location), 'secret.key');
    expect(existsSync(keyFile)).toBe(true);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    // Another process's view: a fresh store on the same file opens the token with the same key.
    const again = await openConnectorStore(db, { clock });
    expect((await again.get('mhs-guarded'))?.auth).toEqual({ scheme: 'bearer', token: TOKEN });
  });

  it('under another key the row does not open: MHS.HOST.SECRET_KEY_INVALID naming the key, nothing guessed', async () => {
    const db = await openTestDb();
    open.push(db);
    await (await openConnectorStore(db, { clock })).upsertDiscovered(row());
    const other = openSecretBox(db.location, { MHS_HOST_SECRET_KEY: randomBytes(32).toString('base64') });
    const store = await openConnectorStore(db, { clock, secrets: other });
    await expect(store.get('mhs-guarded')).rejects.toMatchObject({
      code: ErrorCode.HOST_SECRET_KEY_INVALID,
      details: { key_source: 'MHS_HOST_SECRET_KEY', connector_id: 'mhs-guarded' },
    });
    const short = openSecretBox(db.location, { MHS_HOST_SECRET_KEY: 'c2hvcnQ=' });
    expect(() => short.seal('x')).toThrow(expect.objectContaining({ code: ErrorCode.HOST_SECRET_KEY_INVALID }));
  });

  it('a row written in plain text by an older version is sealed when the store is opened', async () => {
    const db = await openTestDb();
    open.push(db);
    await openConnectorStore(db, { clock });
    const now = '2026-01-01T00:00:00.000Z';
    await db.run(
      `INSERT INTO connector_rows (connector_id, transport, url, enabled, source, seen_in, auth, created_at, updated_at)
       VALUES ('mhs-old', 'http', 'http://127.0.0.1:9/mcp', 0, '{"kind":"env","ref":"MHS_ENDPOINTS"}', '[]', ?, ?, ?)`,
      [JSON.stringify({ scheme: 'bearer', token: TOKEN }), now, now],
    );
    const store = await openConnectorStore(db, { clock });
    const raw = await db.get<{ auth: string }>("SELECT auth FROM connector_rows WHERE connector_id = 'mhs-old'");
    expect(raw?.auth).not.toContain(TOKEN);
    expect((await store.get('mhs-old'))?.auth).toEqual({ scheme: 'bearer', token: TOKEN });
  });

  it('mhs-host endpoints show names the scheme, never the token', async () => {
    const db = await openTestDb();
    await (await openConnectorStore(db, { clock })).upsertDiscovered(row());
    await db.close();
    const r = await runCli(['endpoints', 'show', 'mhs-guarded', '--db', db.location]);
    expect(r.stdout + r.stderr).toContain('bearer');
    expect(r.stdout + r.stderr).not.toContain(TOKEN);
  });
});

describe.skipIf(!process.env.MHS_TEST_PG_URL)('credentials at rest (PostgreSQL)', () => {
  it('the auth column holds no token; the row opens with the key', async () => {
    const db = (await openTestPg()) as Db;
    open.push(db);
    const key = randomBytes(32).toString('base64');
    const store = await openConnectorStore(db, {
      clock,
      secrets: openSecretBox(db.location, { MHS_HOST_SECRET_KEY: key }),
    });
    await store.upsertDiscovered(row());
    const raw = await db.all<Record<string, unknown>>('SELECT * FROM connector_rows');
    expect(JSON.stringify(raw)).not.toContain(TOKEN);
    // Every table of the store's schema, every row as text: the token is nowhere in the store (issue 20).
    const tables = await db.all<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
    );
    expect(tables.map((t) => t.table_name)).toContain('connector_rows');
    for (const { table_name } of tables) {
      const rows = await db.all<{ t: string }>(`SELECT CAST(x AS TEXT) AS t FROM "${table_name}" AS x`);
      for (const r of rows) expect(r.t, table_name).not.toContain(TOKEN);
    }
    expect((await store.get('mhs-guarded'))?.auth).toEqual({ scheme: 'bearer', token: TOKEN });
  });
});
