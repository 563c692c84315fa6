/**
 * Where start-up recovery may begin reading the ledger: every `command.intent` below the mark is settled, so a
 * restart reads only the tail instead of the whole history (HOST-091 recovery stays O(tail)). The mark is an
 * optimisation, never the truth: a lost or stale (lower) mark only means reading more.
 */
import { storeCall } from '../ledger/db.js';
import type { Db } from '../ledger/db.js';
import { migrate } from '../ledger/migrate.js';

/** The persisted recovery mark. */
export interface RecoveryMarkStore {
  /** First ledger seq recovery must read (0 when none is stored). */
  get(): Promise<number>;
  set(seq: number): Promise<void>;
}

const DDL = `CREATE TABLE IF NOT EXISTS engine_recovery_mark (
  id INTEGER PRIMARY KEY,
  from_seq BIGINT NOT NULL
)`;

/** Opens the mark on `db` (migration `engine-002-recovery-mark`); failures reject `MHS.HOST.LEDGER_UNAVAILABLE`. */
export async function openRecoveryMarkStore(db: Db): Promise<RecoveryMarkStore> {
  await migrate(db, 'engine-002-recovery-mark', DDL);
  const wrap = storeCall;
  return {
    get: () =>
      wrap(async () => {
        const row = await db.get<{ from_seq: number | string }>(
          'SELECT from_seq FROM engine_recovery_mark WHERE id = 1',
        );
        return row ? Number(row.from_seq) : 0;
      }),
    set: (seq) =>
      wrap(async () => {
        await db.run(
          `INSERT INTO engine_recovery_mark (id, from_seq) VALUES (1, ?)
           ON CONFLICT (id) DO UPDATE SET from_seq = excluded.from_seq`,
          [seq],
        );
      }),
  };
}
