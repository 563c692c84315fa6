// Real stores for the mhs tests: a SQLite file in a fresh temp dir, or a fresh PostgreSQL schema.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb } from '../../../src/ledger/index.js';
import type { Db } from '../../../src/ledger/db.js';

/** Store kinds available here: SQLite always, PostgreSQL when `MHS_TEST_PG_URL` is set. */
export const STORE_KINDS: Array<'sqlite' | 'postgres'> = process.env.MHS_TEST_PG_URL
  ? ['sqlite', 'postgres']
  : ['sqlite'];

/** Opens a fresh store of `kind`. */
export async function openStore(kind: 'sqlite' | 'postgres'): Promise<Db> {
  if (kind === 'sqlite') return openDb(join(mkdtempSync(join(tmpdir(), 'mhs-mhs-')), 'host.db'));
  const url = process.env.MHS_TEST_PG_URL as string;
  const schema = `mhs_${process.pid}_${Math.floor(Math.random() * 1e9)}`;
  return openDb(`${url}${url.includes('?') ? '&' : '?'}schema=${schema}`);
}
