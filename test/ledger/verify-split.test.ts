// Guarantees (issue 21 item 3, HOST-051): on a SQLite ledger of at least 10,000 seqs, `ledger.verify()` checks the
// upper half on a reader thread (its own read-only connection, src/ledger/verify-worker.ts) while it walks the lower
// half; the thread really runs and accepts that half, and whatever it does not accept or does not follow on from the
// lower half is judged by the verifier, so every tamper gives the verdict the one-thread verifier gives: an edited
// line, a digest member moved into a nested object, and an edited prev_digest column, in either half and at the seam.
// The CLI's `ledger status` uses the thread in its own process and exits once it has printed the chain.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../src/core/index.js';
import { openDb, openLedger } from '../../src/ledger/index.js';
import type { Db, DurableLedger } from '../../src/ledger/index.js';
import { verifyStored } from '../../src/ledger/ledger-rows.js';
import { StoredRangeReader } from '../../src/ledger/stored-range-reader.js';
import { runCli, tempDir } from './helpers.js';

const N = 12_000;
let root: { dir: string; cleanup: () => void };
let file: string;
let db: Db;
let ledger: DurableLedger;
let original: Map<number, { line: string; prev: string }>;

beforeAll(async () => {
  root = tempDir('mhs-verify-split-');
  file = join(root.dir, 'host.db');
  db = await openDb(file, { sqlite: { synchronous: 'NORMAL' } });
  ledger = await openLedger(db, { clock: new SimulatedClock() });
  for (let i = 0; i < N; i += 1000)
    await ledger.appendBatch(
      Array.from({ length: 1000 }, (_, k) => ({
        kind: 'tool_call' as const,
        command_id: `cmd_${i + k}`,
        args: { a: i + k },
      })),
    );
  await db.exec('DROP TRIGGER ledger_entries_no_update');
  original = new Map();
}, 120_000);

afterAll(async () => {
  ledger.dispose();
  await db.close();
  root.cleanup();
});

/** Sets row `seq`'s line (or prev_digest column) with `edit`, remembering the original for {@link restore}. */
async function tamper(seq: number, edit: { line?: (l: string, digest: string) => string; prev?: string }) {
  const row = await db.get<{ line: string; digest: string; prev_digest: string }>(
    'SELECT line, digest, prev_digest FROM ledger_entries WHERE seq = ?',
    [seq],
  );
  if (!row) throw new Error(`no row ${seq}`);
  original.set(seq, { line: row.line, prev: row.prev_digest });
  if (edit.line) {
    const line = edit.line(row.line, row.digest);
    if (line === row.line) throw new Error(`the edit of row ${seq} changed nothing`);
    await db.run('UPDATE ledger_entries SET line = ? WHERE seq = ?', [line, seq]);
  }
  if (edit.prev) await db.run('UPDATE ledger_entries SET prev_digest = ? WHERE seq = ?', [edit.prev, seq]);
}

async function restore(): Promise<void> {
  for (const [seq, o] of original)
    await db.run('UPDATE ledger_entries SET line = ?, prev_digest = ? WHERE seq = ?', [o.line, o.prev, seq]);
  original.clear();
}

/** The digest member moved into `args` (the bytes the link hashes are unchanged). */
const nested = (line: string, digest: string): string => {
  const member = `"digest":${JSON.stringify(digest)}`;
  const stripped = line.includes(`,${member}`) ? line.replace(`,${member}`, '') : line.replace(`${member},`, '');
  return stripped.replace(/"args":\{"a":(\d+)\}/, `"args":{"a":$1,${member}}`);
};

describe('ledger verify with a reader thread (SQLite)', () => {
  it('the reader thread accepts the upper half of an intact ledger, and the split verify agrees with one thread', async () => {
    const reader = new StoredRangeReader(file);
    try {
      const mid = Math.floor(N / 2);
      const r = await reader.check(mid, N);
      expect(r).toMatchObject({ first: { seq: mid + 1 }, last: { seq: N }, accepted: N - mid });
    } finally {
      await reader.close();
    }
    const one = await verifyStored(db);
    expect(one).toMatchObject({ ok: true, count: N + 1 });
    expect(await ledger.verify()).toEqual(one);
  });

  it('`mhs-host ledger status` in its own process verifies with the reader thread, prints the chain and exits', async () => {
    // The thread is referenced only while a check is pending: unreferenced throughout, the process would exit
    // before the check returns (nothing printed); referenced throughout, it would never exit.
    const r = await runCli(['ledger', 'status', '--db', file]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ state: 'available', chain: { ok: true, count: N + 1 } });
  }, 60_000);

  const mid = Math.floor(N / 2);
  /** Row `seq` holds `args: {a: seq - 1}` (the genesis is seq 0): one more in its line. */
  const bump = (seq: number) => (l: string) => l.replace(`"a":${seq - 1}}`, `"a":${seq}}`);
  const cases: [string, number, Parameters<typeof tamper>[1]][] = [
    ['an edited line in the lower half', 1_234, { line: bump(1_234) }],
    ['an edited line in the upper half', 9_876, { line: bump(9_876) }],
    ['an edited line just after the seam', mid + 1, { line: bump(mid + 1) }],
    ['a digest member moved into a nested object in the upper half', 10_001, { line: nested }],
    ['an edited prev_digest column at the seam', mid + 1, { prev: 'f'.repeat(64) }],
    ['an edited prev_digest column of the last row', N, { prev: 'e'.repeat(64) }],
  ];
  it.each(cases)('%s: the same verdict as one thread, at that seq', async (_name, seq, edit) => {
    await tamper(seq, edit);
    try {
      const one = await verifyStored(db);
      expect(one).toMatchObject({ ok: false, broken_at: seq });
      expect(await ledger.verify()).toEqual(one);
    } finally {
      await restore();
    }
    expect(await ledger.verify()).toMatchObject({ ok: true, count: N + 1 });
  });
});
