// Real stores for policy tests: a SQLite file in a fresh temp dir, or a fresh PostgreSQL schema.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb } from '../../../src/ledger/index.js';
import type { OpenDbOptions } from '../../../src/ledger/open-db.js';
import type { Db } from '../../../src/ledger/db.js';

/** Opens a real SQLite file in a fresh temp dir. */
export async function openTestDb(opts: OpenDbOptions = {}): Promise<Db> {
  return openDb(join(mkdtempSync(join(tmpdir(), 'mhs-policy-')), 'host.db'), opts);
}

/** Opens a fresh schema in the PostgreSQL at `MHS_TEST_PG_URL`, or undefined when it is unset. */
export async function openTestPg(): Promise<Db | undefined> {
  const url = process.env.MHS_TEST_PG_URL;
  if (!url) return undefined;
  const schema = `policy_${process.pid}_${Math.floor(Math.random() * 1e9)}`;
  return openDb(`${url}${url.includes('?') ? '&' : '?'}schema=${schema}`);
}
