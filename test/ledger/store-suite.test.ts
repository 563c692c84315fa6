// The shared store suite (issue 4): every store dialect (SQLite always; PostgreSQL when
// MHS_TEST_PG_URL is set, as in CI) passes the same tests: migrations, genesis, append/read,
// append-only triggers, 32 concurrent appenders on two handles never forking the chain, failure
// surfacing as MHS.HOST.LEDGER_UNAVAILABLE with recovery, joining a caller's transaction,
// tamper detection by verify(), and prune + checkpoint still verifying.
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode, GENESIS_PREV_DIGEST, HostError, SimulatedClock, chainLink } from '../../src/core/index.js';
import {
  appendOnlyDdl,
  appliedMigrations,
  exportPackage,
  isAppendOnlyViolation,
  migrate,
  openDb,
  openLedger,
  pruneLedger,
  verifyPackage,
} from '../../src/ledger/index.js';
import type { Db, LedgerEntry } from '../../src/ledger/index.js';
import { BACKENDS, fillSampleStore, openStore, tempDir } from './helpers.js';
import type { StoreHandle } from './helpers.js';

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return err instanceof HostError ? err.code : `raw:${String((err as { code?: unknown }).code)}`;
  }
  return 'resolved';
}

/** Makes the store refuse writes on this handle (a simulated read-only/lost store) and back. */
async function setWritable(db: Db, writable: boolean): Promise<void> {
  if (db.dialect === 'sqlite') await db.exec(`PRAGMA query_only = ${writable ? 'OFF' : 'ON'}`);
  else await db.exec(`SET default_transaction_read_only = ${writable ? 'off' : 'on'}`);
}

describe.each(BACKENDS)('store suite: $name', (backend) => {
  const open: Db[] = [];
  const handles: StoreHandle[] = [];
  const cleanups: (() => void)[] = [];

  async function fresh() {
    const h = await backend.fresh();
    handles.push(h);
    const s = await openStore(h.location);
    open.push(s.db);
    return { ...s, location: h.location };
  }

  afterEach(async () => {
    for (const db of open.splice(0)) await db.close().catch(() => undefined);
    for (const h of handles.splice(0)) await h.cleanup();
    for (const c of cleanups.splice(0)) c();
  });

  it('migrate applies a named migration once and records it', async () => {
    const { db } = await fresh();
    const ddl = (d: Db['dialect']) =>
      `CREATE TABLE t_events (id BIGINT PRIMARY KEY, body TEXT NOT NULL);\n${appendOnlyDdl(d, 't_events')}`;
    expect(await migrate(db, '0100_events', ddl)).toBe(true);
    expect(await migrate(db, '0100_events', ddl)).toBe(false);
    expect(await appliedMigrations(db)).toEqual(
      expect.arrayContaining(['0001_ledger_entries', '0002_ledger_artifacts', '0100_events']),
    );
    await db.run('INSERT INTO t_events (id, body) VALUES (?, ?)', [1, 'x']);
    const upd = await codeOf(db.run('UPDATE t_events SET body = ? WHERE id = 1', ['y']));
    expect(upd).not.toBe('resolved');
    await expect(db.run('DELETE FROM t_events')).rejects.toSatisfy(isAppendOnlyViolation);
    expect(await db.get<{ body: string }>('SELECT body FROM t_events WHERE id = 1')).toEqual({ body: 'x' });
  });

  it('HOST-051: the chain starts at a genesis entry and every append links to the one before', async () => {
    const { ledger, location, db } = await fresh();
    const g = await ledger.first();
    expect(g).toMatchObject({ seq: 0, kind: 'genesis', prev_digest: GENESIS_PREV_DIGEST });
    const a = await ledger.append({ kind: 'session.open', session_id: 'ses_a', endpoint_id: 'mhs://x' });
    const b = await ledger.appendBatch([
      { kind: 'command.intent', command_id: 'cmd_1', session_id: 'ses_a' },
      { kind: 'command.not_sent', command_id: 'cmd_1', session_id: 'ses_a' },
    ]);
    expect([a.seq, ...b.map((e) => e.seq)]).toEqual([1, 2, 3]);
    expect(a.prev_digest).toBe(g.digest);
    expect(b[0]?.prev_digest).toBe(a.digest);
    for (const e of [a, ...b]) expect(chainLink(e)).toBe(e.digest);
    expect((await ledger.head()).digest).toBe(b[1]?.digest);
    expect((await ledger.range(1, 2)).map((e) => e.seq)).toEqual([1, 2]);
    expect((await ledger.range(2)).map((e) => e.seq)).toEqual([2, 3]);
    expect((await ledger.byCommand('cmd_1')).map((e) => e.kind)).toEqual(['command.intent', 'command.not_sent']);
    expect((await ledger.bySession('ses_a')).length).toBe(3);
    expect(await ledger.verify()).toEqual({ ok: true, count: 4, head_digest: b[1]?.digest });
    // Reopening neither adds a second genesis nor changes the head.
    const again = await openLedger(db, { clock: new SimulatedClock() });
    expect((await again.range(0)).filter((e) => e.kind === 'genesis').length).toBe(1);
    const other = await openDb(location);
    open.push(other);
    expect((await (await openLedger(other, { clock: new SimulatedClock() })).head()).seq).toBe(3);
  });

  it('rejects malformed appends without writing anything', async () => {
    const { ledger } = await fresh();
    const bad = [
      ledger.append({ kind: 'nope' as 'error' }),
      ledger.append({ kind: 'genesis' }),
      ledger.append({ kind: 'error', seq: 9 }),
      ledger.append({ kind: 'error', digest: 'x' }),
      ledger.appendBatch([{ kind: 'error' }, { kind: 'error', big: 1n }]),
    ];
    for (const p of bad) expect(await codeOf(p)).toBe(ErrorCode.HOST_INTERNAL);
    expect((await ledger.head()).seq).toBe(0);
  });

  it('HOST-051: ledger and artifact tables refuse UPDATE and DELETE at the database level', async () => {
    const { db, ledger, clock } = await fresh();
    await fillSampleStore(db, clock, ledger);
    for (const t of ['ledger_entries', 'ledger_manifests', 'ledger_evidence_bundles', 'ledger_transcript']) {
      await expect(db.run(`DELETE FROM ${t}`)).rejects.toSatisfy(isAppendOnlyViolation);
    }
    await expect(db.run(`UPDATE ledger_entries SET kind = 'error' WHERE seq = 1`)).rejects.toSatisfy(
      isAppendOnlyViolation,
    );
    await expect(db.run(`UPDATE ledger_transcript SET line = '{}'`)).rejects.toSatisfy(isAppendOnlyViolation);
    if (db.dialect === 'postgres')
      await expect(db.exec('TRUNCATE ledger_entries')).rejects.toSatisfy(isAppendOnlyViolation);
    expect(await ledger.verify()).toMatchObject({ ok: true });
  });

  it('HOST-092: 32 concurrent appenders on two handles never fork the chain', async () => {
    const { ledger, location } = await fresh();
    const db2 = await openDb(location);
    open.push(db2);
    const ledger2 = await openLedger(db2, { clock: new SimulatedClock() });
    const results = await Promise.all(
      Array.from({ length: 32 }, (_, i) =>
        (i % 2 ? ledger : ledger2).appendBatch(
          Array.from({ length: 4 }, (_, j) => ({ kind: 'tool_call' as const, command_id: `cmd_${i}_${j}` })),
        ),
      ),
    );
    const seqs = results.flat().map((e) => e.seq);
    expect(new Set(seqs).size).toBe(128);
    for (const r of results) {
      // Each caller's batch is contiguous and in order.
      expect(r.map((e) => e.seq)).toEqual(r.map((_, k) => (r[0] as LedgerEntry).seq + k));
    }
    const all = await ledger.range(0);
    expect(all.map((e) => e.seq)).toEqual(Array.from({ length: 129 }, (_, k) => k));
    expect(new Set(all.map((e) => e.prev_digest)).size).toBe(129);
    expect(await ledger.verify()).toMatchObject({ ok: true, count: 129 });
  });

  it('HOST-093: a store that refuses writes rejects appends with LEDGER_UNAVAILABLE until a probe recovers', async () => {
    const h = await backend.fresh();
    handles.push(h);
    // One connection, so the session setting applies to every statement of this handle.
    const db = await openDb(h.location, { postgres: { max: 1 } });
    open.push(db);
    const clock = new SimulatedClock();
    const ledger = await openLedger(db, { clock, probeIntervalMs: 1000 });
    const seen: string[] = [];
    ledger.onStatus((s) => seen.push(s.state));
    await ledger.append({ kind: 'error', note: 'before' });
    await setWritable(db, false);
    expect(await codeOf(ledger.append({ kind: 'command.intent', command_id: 'cmd_lost' }))).toBe(
      ErrorCode.HOST_LEDGER_UNAVAILABLE,
    );
    expect(await codeOf(ledger.appendBatch([{ kind: 'error' }, { kind: 'error' }]))).toBe(
      ErrorCode.HOST_LEDGER_UNAVAILABLE,
    );
    expect(ledger.status()).toMatchObject({
      state: 'unavailable',
      last_error: { code: ErrorCode.HOST_LEDGER_UNAVAILABLE },
    });
    expect((await ledger.probe()).state).toBe('unavailable');
    await setWritable(db, true);
    expect((await ledger.probe()).state).toBe('available');
    expect(seen).toEqual(['unavailable', 'available']);
    // Nothing half-written: the refused entries are absent and the chain verifies.
    expect(await ledger.byCommand('cmd_lost')).toEqual([]);
    expect(await ledger.verify()).toMatchObject({ ok: true, count: 2 });

    // Without anyone calling probe(), the ledger keeps probing on its clock and recovers by itself.
    await setWritable(db, false);
    expect(await codeOf(ledger.append({ kind: 'error' }))).toBe(ErrorCode.HOST_LEDGER_UNAVAILABLE);
    clock.advance(1000); // a probe that still fails, and is rescheduled
    await new Promise((r) => setImmediate(r));
    await ledger.range(0); // let the failed probe settle on this handle
    expect(ledger.status().state).toBe('unavailable');
    await setWritable(db, true);
    // Advance the clock until the rescheduled probe has run (it is async: settle between steps).
    let state = ledger.status().state;
    for (let i = 0; i < 50 && state !== 'available'; i++) {
      clock.advance(1000);
      await new Promise((r) => setImmediate(r));
      await ledger.range(0);
      state = ledger.status().state;
    }
    expect(state).toBe('available');
    expect(seen).toEqual(['unavailable', 'available', 'unavailable', 'available']);
    ledger.dispose();
  });

  it('an append inside a caller transaction commits or rolls back with it', async () => {
    const { db, ledger } = await fresh();
    await expect(
      db.tx(async (t) => {
        await ledger.appendIn(t, [{ kind: 'approval', command_id: 'cmd_rb' }]);
        throw new Error('abort');
      }),
    ).rejects.toThrow();
    expect(await ledger.byCommand('cmd_rb')).toEqual([]);
    await db.tx(async (t) => {
      await ledger.appendIn(t, [{ kind: 'approval', command_id: 'cmd_ok' }]);
    });
    expect((await ledger.byCommand('cmd_ok')).length).toBe(1);
    expect(await ledger.verify()).toMatchObject({ ok: true });
  });

  it('HOST-051: verify() names the first entry whose stored bytes were altered', async () => {
    const { db, ledger } = await fresh();
    for (let i = 0; i < 5; i++) await ledger.append({ kind: 'tool_call', command_id: `cmd_${i}` });
    const row = await db.get<{ line: string }>('SELECT line FROM ledger_entries WHERE seq = 3');
    const forged = (row?.line as string).replace('cmd_2', 'cmd_X');
    // Bypass the guard as an attacker with database access would.
    await db.exec(
      db.dialect === 'sqlite'
        ? 'DROP TRIGGER ledger_entries_no_update'
        : 'DROP TRIGGER ledger_entries_no_update ON ledger_entries',
    );
    await db.run('UPDATE ledger_entries SET line = ? WHERE seq = 3', [forged]);
    expect(await ledger.verify()).toEqual({ ok: false, broken_at: 3, reason: 'digest' });
    // The exporter refuses to call such a package verified (HOST-053).
    const out = tempDir();
    cleanups.push(out.cleanup);
    const r = await exportPackage({ db, outDir: `${out.dir}/pkg`, clock: new SimulatedClock() });
    expect(r.status).toBe('unverified');
    expect(r.break).toMatchObject({ code: ErrorCode.EVIDENCE_CHAIN_BROKEN, file: 'ledger.jsonl', seq: 3 });
    const v = await verifyPackage(`${out.dir}/pkg`);
    expect(v.ok).toBe(false);
    expect(v.first).toMatchObject({ code: ErrorCode.EVIDENCE_CHAIN_BROKEN, file: 'ledger.jsonl', seq: 3 });
  });

  it('HOST-051: a line whose digest member was moved into a nested object does not verify (hashed bytes unchanged)', async () => {
    const { db, ledger } = await fresh();
    for (let i = 0; i < 4; i++) await ledger.append({ kind: 'tool_call', command_id: `cmd_${i}`, args: { a: i } });
    const row = await db.get<{ line: string; digest: string }>('SELECT line, digest FROM ledger_entries WHERE seq = 2');
    const member = `"digest":${JSON.stringify(row?.digest)}`;
    const line = row?.line as string;
    // Without the member the bytes are exactly those hashed; re-inserted inside `args`, the line parses to another
    // entry (a nested field added, the top-level digest gone) while stripping the member still gives those bytes.
    const stripped = line.includes(`,${member}`) ? line.replace(`,${member}`, '') : line.replace(`${member},`, '');
    const forged = stripped.replace('"args":{"a":1}', `"args":{"a":1,${member}}`);
    expect(forged).not.toBe(stripped);
    expect((JSON.parse(forged) as { digest?: string }).digest).toBeUndefined();
    await db.exec(
      db.dialect === 'sqlite'
        ? 'DROP TRIGGER ledger_entries_no_update'
        : 'DROP TRIGGER ledger_entries_no_update ON ledger_entries',
    );
    await db.run('UPDATE ledger_entries SET line = ? WHERE seq = 2', [forged]);
    expect(await ledger.verify()).toEqual({ ok: false, broken_at: 2, reason: 'digest' });
  });

  it('HOST-056: prune before a checkpoint leaves a ledger that still verifies, and its export verifies', async () => {
    const { db, ledger, clock } = await fresh();
    await fillSampleStore(db, clock, ledger);
    expect(await codeOf(pruneLedger(db, ledger, 5))).toBe(ErrorCode.HOST_CONFIG_INVALID);
    const cp = await ledger.checkpoint({ reason: 'retention' });
    const sealedHead = (await ledger.range(cp.seq - 1, cp.seq - 1))[0] as LedgerEntry;
    expect(cp).toMatchObject({
      kind: 'checkpoint',
      prev_digest: sealedHead.digest,
      sealed: { seq: sealedHead.seq, digest: sealedHead.digest },
    });
    await ledger.append({ kind: 'session.open', session_id: 'ses_2' });
    // Inside the retention period (the endpoints' receipt_retention_s), nothing is pruned.
    const retention = { clock, minAgeMs: 86_400_000 };
    expect(await codeOf(pruneLedger(db, ledger, cp.seq + 1, retention))).toBe(ErrorCode.HOST_CONFIG_INVALID);
    clock.advance(86_400_000);
    const r = await pruneLedger(db, ledger, cp.seq + 1, retention);
    expect(r).toMatchObject({ pruned: cp.seq, checkpoint: { seq: cp.seq } });
    expect((await ledger.first()).seq).toBe(cp.seq);
    expect(await ledger.verify()).toMatchObject({ ok: true, count: 3 });
    // The guard is back after the maintenance path.
    await expect(db.run('DELETE FROM ledger_entries')).rejects.toSatisfy(isAppendOnlyViolation);
    const out = tempDir();
    cleanups.push(out.cleanup);
    const x = await exportPackage({ db, outDir: `${out.dir}/pkg`, clock });
    expect(x.status).toBe('verified');
    expect(x.manifest.ledger).toMatchObject({
      first_seq: cp.seq,
      checkpoint: { seq: cp.seq, sealed_digest: sealedHead.digest },
    });
    expect(await verifyPackage(`${out.dir}/pkg`)).toMatchObject({ ok: true });
  });
});
