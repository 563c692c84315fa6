import { randomBytes } from 'node:crypto';
import { ErrorCode, HostError } from '../../core/index.js';
import type { Db } from '../../ledger/index.js';

/** A host id: 1-256 printable characters without spaces (URL- or DNS-style is recommended, RFC 0040 §D). */
const HOST_ID = /^[\x21-\x7e]{1,256}$/;

/** Throws `validation_error` unless `id` is a usable host id. */
export function checkHostId(id: string): string {
  if (!HOST_ID.test(id))
    throw new HostError(ErrorCode.VALIDATION_ERROR, 'a host id is 1-256 printable characters without spaces', { id });
  return id;
}

/**
 * This host's stable id (RFC 0040 §D `crossHostCausation.hostId`): `configured` when given (then stored), else the
 * id stored in `db`, else a new `mhs-host/<random>` id stored there, so it survives restarts of the same store.
 */
export async function resolveHostId(db: Db, configured?: string): Promise<string> {
  await db.exec('CREATE TABLE IF NOT EXISTS openwop_host_identity (k TEXT PRIMARY KEY, v TEXT NOT NULL)');
  if (configured !== undefined) {
    checkHostId(configured);
    await db.tx(async (t) => {
      await t.run("DELETE FROM openwop_host_identity WHERE k = 'hostId'");
      await t.run("INSERT INTO openwop_host_identity (k, v) VALUES ('hostId', ?)", [configured]);
    });
    return configured;
  }
  const fresh = `mhs-host/${randomBytes(8).toString('hex')}`;
  await db.run("INSERT INTO openwop_host_identity (k, v) VALUES ('hostId', ?) ON CONFLICT (k) DO NOTHING", [fresh]);
  const row = await db.get<{ v: string }>("SELECT v FROM openwop_host_identity WHERE k = 'hostId'");
  return row!.v;
}
