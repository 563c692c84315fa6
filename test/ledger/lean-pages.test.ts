// Issue 21: migration 0007 rebuilds the SQLite ledger tables so an append dirties fewer WAL pages (no
// UNIQUE(prev_digest), WITHOUT ROWID side tables). A store written by the schema before it (a real file made by
// fixtures/make-store-before-0007.ts at 175abd5) keeps every row, index, trigger and answer; and on both backends
// two writers that read the same head cannot both append after it.
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode, HostError, SimulatedClock, seal } from '../../src/core/index.js';
import { appliedMigrations, isAppendOnlyViolation, openDb, openLedger, pruneLedger } from '../../src/ledger/index.js';
import type { Db, LedgerEntry } from '../../src/ledger/index.js';
import { ensureMhsEffectIndex } from '../../src/openwop/effects/mhs-effect-index.js';
import { BACKENDS, REPO, openStore, tempDir } from './helpers.js';

const FIXTURE = join(REPO, 'test/ledger/fixtures/store-before-0007.db');
const EP = 'mhs://fixture/conveyor';
const TABLES = ['ledger_entries', 'device_gates', 'ledger_unsettled', 'ledger_open_approvals', 'ledger_sent_permits'];

function snapshot(file: string): Record<string, unknown[]> {
  const raw = new Database(file, { readonly: true });
  try {
    const out: Record<string, unknown[]> = {};
    for (const t of [...TABLES, 'openwop_run_effects']) out[t] = raw.prepare(`SELECT * FROM ${t} ORDER BY 1, 2`).all();
    return out;
  } finally {
    raw.close();
  }
}

const INSERT = `INSERT INTO ledger_entries (seq, prev_digest, digest, ts, kind, command_id, session_id, endpoint_id, line)
  VALUES (?, ?, ?, ?, ?, NULL, NULL, NULL, ?)`;

/** A second writer's insert of a sealed entry, on its own connection. */
function insertRaw(db: Db, e: LedgerEntry): Promise<unknown> {
  return db.tx((t) => t.run(INSERT, [e.seq, e.prev_digest, e.digest, e.ts, e.kind, JSON.stringify(e)]));
}

function entryAfter(seq: number, prev: string, note: string): LedgerEntry {
  return seal({ seq, prev_digest: prev, ts: '2026-12-07T00:00:00.000Z', kind: 'error', note }) as LedgerEntry;
}

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: unknown) => (e instanceof HostError ? e.code : String(e)),
  );

describe('migration 0007 on a store made by the schema before it (SQLite file)', () => {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  function copyFixture(): string {
    const t = tempDir('mhs-lean-pages-');
    cleanups.push(t.cleanup);
    const file = join(t.dir, 'host.db');
    copyFileSync(FIXTURE, file);
    return file;
  }

  it('keeps every row, index, trigger and answer, and drops only the page-costly structures', async () => {
    const file = copyFixture();
    const before = snapshot(file);
    expect(before['ledger_entries']).toHaveLength(90);
    const db = await openDb(file);
    cleanups.push(() => db.close());
    const ledger = await openLedger(db, { clock: new SimulatedClock(), owner: 'test:1' });
    cleanups.push(() => ledger.dispose());
    await ensureMhsEffectIndex(db);
    expect(await appliedMigrations(db)).toContain('0007_ledger_lean_pages');
    expect(snapshot(file)).toEqual(before);

    const schema = await db.all<{ type: string; name: string; tbl_name: string; sql: string | null }>(
      `SELECT type, name, tbl_name, sql FROM sqlite_master WHERE tbl_name IN (${TABLES.map(() => '?').join(', ')})`,
      TABLES,
    );
    const names = (table: string, type: string) =>
      schema
        .filter((r) => r.tbl_name === table && r.type === type)
        .map((r) => r.name)
        .sort();
    expect(names('ledger_entries', 'index')).toEqual(['ledger_entries_command', 'ledger_entries_session']);
    expect(names('ledger_entries', 'trigger')).toEqual([
      'ledger_entries_link',
      'ledger_entries_no_delete',
      'ledger_entries_no_update',
      'openwop_run_effects_mhs',
    ]);
    for (const t of TABLES.slice(1)) {
      expect(names(t, 'index')).toEqual([]);
      expect(schema.find((r) => r.name === t)?.sql).toMatch(/WITHOUT ROWID\s*$/);
    }

    expect(await ledger.verify()).toMatchObject({ ok: true, count: 90 });
    expect(await ledger.unsettledIntents()).toEqual([{ command_id: 'cmd_unsettled', seq: 82 }]);
    expect(await ledger.openApprovals()).toEqual([{ approvalId: 'apr_open', permitId: 'prm_open' }]);
    expect(await ledger.permitSent('prm_used')).toBe(true);
    expect(await ledger.permitSent('prm_open')).toBe(false);
    expect((await ledger.deviceGates(EP)).map((g) => [g.device_id, g.command_id])).toEqual([
      ['conveyor-b', 'cmd_unsettled'],
    ]);

    // The kept structures still act: the held gate refuses, the effect index fills, settling clears both tables.
    const intent = (id: string, device: string, extra: Record<string, unknown> = {}) => ({
      kind: 'command.intent' as const,
      command_id: id,
      endpoint_id: EP,
      device_id: device,
      ...extra,
    });
    expect(await codeOf(ledger.appendBatch([intent('cmd_other', 'conveyor-b')], { claimGates: true }))).toBe(
      ErrorCode.HOST_DEVICE_GATE_CLOSED,
    );
    await ledger.appendBatch([intent('cmd_run', 'conveyor-d', { run_id: 'run_new', node_id: 'node_b' })], {
      claimGates: true,
    });
    expect(await db.all('SELECT effect_id FROM openwop_run_effects WHERE run_id = ?', ['run_new'])).toEqual([
      { effect_id: 'cmd_run' },
    ]);
    await ledger.append({ kind: 'command.not_sent', command_id: 'cmd_unsettled', endpoint_id: EP });
    expect((await ledger.unsettledIntents()).map((r) => r.command_id)).toEqual(['cmd_run']);
    expect((await ledger.deviceGates(EP)).map((g) => g.command_id)).toEqual(['cmd_run']);
    await expect(db.run(`UPDATE ledger_entries SET kind = 'error' WHERE seq = 1`)).rejects.toSatisfy(
      isAppendOnlyViolation,
    );
    await expect(db.run('DELETE FROM ledger_entries WHERE seq = 1')).rejects.toSatisfy(isAppendOnlyViolation);

    // Retention pruning still passes the guard it keeps (its DELETE trigger kept its name).
    const cp = await ledger.checkpoint();
    const pruned = await pruneLedger(db, ledger, cp.seq);
    expect(pruned.pruned).toBe(cp.seq);
    expect(await ledger.verify()).toMatchObject({ ok: true });
  });

  it('an old store opened read-only still opens and verifies (no migration written)', async () => {
    const file = copyFixture();
    const db = await openDb(file, { sqlite: { readonly: true } });
    cleanups.push(() => db.close());
    const ledger = await openLedger(db, { clock: new SimulatedClock(), probeIntervalMs: 0 });
    expect(ledger.status().state).toBe('unavailable');
    expect(await appliedMigrations(db)).not.toContain('0007_ledger_lean_pages');
    expect(await ledger.verify()).toMatchObject({ ok: true, count: 90 });
    expect(await ledger.unsettledIntents()).toEqual([{ command_id: 'cmd_unsettled', seq: 82 }]);
  });

  it('refuses a row that skips a seq after the head, as the dropped index could not', async () => {
    const t = tempDir('mhs-lean-pages-');
    cleanups.push(t.cleanup);
    const { db, ledger } = await openStore(join(t.dir, 'host.db'));
    cleanups.push(() => db.close());
    const head = await ledger.append({ kind: 'error', note: 'head' });
    await expect(insertRaw(db, entryAfter(head.seq + 2, head.digest, 'gap'))).rejects.toThrow(/MHS\.HOST\.LEDGER_LINK/);
    expect(await ledger.append({ kind: 'error', note: 'next' })).toMatchObject({ seq: head.seq + 1 });
  });
});

describe.each(BACKENDS)('two writers after one head ($name)', (backend) => {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('HOST-092: of two entries sealed after the same head, the database takes one; the other writer goes on after it', async () => {
    const h = await backend.fresh();
    cleanups.push(h.cleanup);
    const a = await openStore(h.location);
    cleanups.push(() => a.db.close());
    for (let i = 0; i < 3; i++) await a.ledger.append({ kind: 'error', note: `n${i}` });
    const head = await a.ledger.head();
    const b = await openDb(h.location);
    cleanups.push(() => b.close());

    // Both writers read the same head; A commits first.
    await insertRaw(a.db, entryAfter(head.seq + 1, head.digest, 'writer A'));
    // B's entry at the same seq, and B's entry linking to the same head at the next free seq, are both refused.
    await expect(insertRaw(b, entryAfter(head.seq + 1, head.digest, 'writer B'))).rejects.toThrow();
    await expect(insertRaw(b, entryAfter(head.seq + 2, head.digest, 'writer B'))).rejects.toThrow();

    // A writer that reads the head inside its write transaction (the ledger's) appends after A's entry.
    const ledgerB = await openLedger(b, { clock: new SimulatedClock() });
    cleanups.push(() => ledgerB.dispose());
    const next = await ledgerB.append({ kind: 'error', note: 'writer B again' });
    const all = await a.ledger.range(0);
    expect(next).toMatchObject({ seq: head.seq + 2, prev_digest: all[head.seq + 1]?.digest });
    expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i));
    expect(new Set(all.map((e) => e.prev_digest)).size).toBe(all.length);
    expect(await a.ledger.verify()).toMatchObject({ ok: true, count: all.length });
  });
});
