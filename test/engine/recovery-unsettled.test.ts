// Issue 21 item 4: start-up recovery in O(unsettled). The writer keeps the unsettled intents and open approvals in
// side tables in each append's own transaction; recovery from them finds exactly what a scan of the whole ledger
// finds (property over random histories, on a real SQLite file and a real PostgreSQL schema), an older store gets
// them by migration, and a start reads only the entries of the unsettled commands (asserted on the SQL it runs).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RealClock } from '../../src/core/index.js';
import { createEngine } from '../../src/engine/index.js';
import { recoveryScan, scanLedger } from '../../src/engine/recovery.js';
import { openDb, openLedger } from '../../src/ledger/index.js';
import type { Ledger, LedgerAppend } from '../../src/ledger/index.js';
import { PG_URL, postgresBackend, sqliteBackend } from '../ledger/helpers.js';
import { recordingDb } from './harness.js';
import type { Backend } from '../ledger/helpers.js';

const clock = new RealClock();
const EP = 'mhs://unsettled/ep';

const intent = (n: number, approval?: number): LedgerAppend => ({
  kind: 'command.intent',
  command_id: `cmd_${n}`,
  endpoint_id: EP,
  device_id: `dev_${n % 3}`,
  capability_id: 'cap.x.v1',
  tool: 'dev__cap_x_v1',
  session_id: 'ses_x',
  input_digest: 'sha256:0',
  input: {},
  effect: 'actuate',
  deadline_ms: 100,
  ...(approval === undefined ? {} : { approval_id: `apr_${approval}`, permit_id: `pmt_${approval}` }),
});
type How = 'completed' | 'running' | 'not_sent' | 'error' | 'reconciled' | 'waiting';
const outcome = (n: number, how: How): LedgerAppend => {
  const c = { command_id: `cmd_${n}`, endpoint_id: EP };
  if (how === 'not_sent') return { kind: 'command.not_sent', ...c };
  if (how === 'error') return { kind: 'error', ...c, error: { mhs_code: 'MHS.X' } };
  if (how === 'reconciled') return { kind: 'reconcile', ...c, outcome: 'not_executed' };
  if (how === 'waiting') return { kind: 'reconcile', ...c, outcome: 'unknown', not_before: '2030-01-01T00:00:00Z' };
  return { kind: 'receipt', ...c, receipt: { status: how, operation_id: `op_${n}` } };
};

/** One step of a history: a command's intent or outcome, or the next stage of an approval's life. */
type Op =
  | { t: 'intent' }
  | { t: 'outcome'; pick: number; how: How }
  | { t: 'approve' }
  | { t: 'advance'; pick: number; to: 'permit' | 'intent' | 'not_executed' };
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.constant<Op>({ t: 'intent' }),
  fc.record({
    t: fc.constant('outcome' as const),
    pick: fc.nat(),
    how: fc.constantFrom<How>('completed', 'running', 'not_sent', 'error', 'reconciled', 'waiting'),
  }),
  fc.constant<Op>({ t: 'approve' }),
  fc.record({
    t: fc.constant('advance' as const),
    pick: fc.nat(),
    to: fc.constantFrom('permit' as const, 'intent' as const, 'not_executed' as const),
  }),
);

/** Appends `ops`; an approval goes decided → permit.issue → (intent carrying it | not_executed), as the host does. */
async function apply(ledger: Ledger, ops: Op[], st: { n: number; approvals: Array<'granted' | 'permit' | 'done'> }) {
  for (const o of ops) {
    if (o.t === 'intent') await ledger.append(intent(st.n++));
    else if (o.t === 'outcome') {
      if (st.n > 0) await ledger.append(outcome(o.pick % st.n, o.how));
    } else if (o.t === 'approve') {
      const id = st.approvals.push('granted') - 1;
      await ledger.append({ kind: 'approval', event: 'decided', decision: 'approve', approval_id: `apr_${id}` });
    } else if (st.approvals.length) {
      const id = o.pick % st.approvals.length;
      const stage = st.approvals[id];
      if (stage === 'done') continue;
      if (o.to === 'permit' && stage === 'granted') {
        st.approvals[id] = 'permit';
        await ledger.append({ kind: 'permit.issue', approval_id: `apr_${id}`, permit_id: `pmt_${id}` });
      } else if (o.to === 'intent' && stage === 'permit') {
        st.approvals[id] = 'done';
        await ledger.append(intent(st.n++, id));
      } else if (o.to === 'not_executed') {
        st.approvals[id] = 'done';
        await ledger.append({ kind: 'approval', event: 'not_executed', approval_id: `apr_${id}` });
      }
    }
  }
}

type Scan = Awaited<ReturnType<typeof scanLedger>>;
const view = (s: Scan) => ({
  unsettled: [...s.unsettled].sort((a, b) => a.commandId.localeCompare(b.commandId)),
  nextFrom: s.nextFrom,
  approvals: [...s.approvalsWithoutIntent].sort((a, b) => a.approvalId.localeCompare(b.approvalId)),
});

const backends: Backend[] = [sqliteBackend, ...(PG_URL ? [postgresBackend] : [])];

describe.each(backends)('start-up recovery in O(unsettled) ($name)', (backend) => {
  const runs = backend.name === 'sqlite' ? 40 : 10;

  it('issue 21 item 4: the side tables give what a scan of the whole ledger gives', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 40 }), async (ops) => {
        const store = await backend.fresh();
        const db = await openDb(store.location);
        try {
          const ledger = await openLedger(db, { clock });
          await apply(ledger, ops, { n: 0, approvals: [] });
          const full = await scanLedger(ledger);
          const fast = await recoveryScan(ledger);
          expect(view(fast)).toEqual(view(full));
          for (const p of fast.usedPermits) expect(full.usedPermits.has(p)).toBe(true);
          // Only the entries of the unsettled commands were read.
          const own = await Promise.all(fast.unsettled.map((p) => ledger.byCommand(p.commandId)));
          expect(fast.scanned).toBe(own.reduce((a, es) => a + es.length, 0));
        } finally {
          await db.close();
          await store.cleanup();
        }
      }),
      { numRuns: runs },
    );
  }, 180_000);

  it('a store that predates the side tables gets them from its entries by migration', async () => {
    const store = await backend.fresh();
    try {
      const ops = fc.sample(fc.array(op, { minLength: 60, maxLength: 60 }), { numRuns: 1, seed: 21 })[0]!;
      let db = await openDb(store.location);
      let ledger = await openLedger(db, { clock });
      await apply(ledger, ops, { n: 0, approvals: [] });
      const before = view(await recoveryScan(ledger));
      expect(before).toEqual(view(await scanLedger(ledger)));
      ledger.dispose();
      await db.exec(`DROP TABLE ledger_unsettled; DROP TABLE ledger_open_approvals; DROP TABLE ledger_sent_permits;
        DELETE FROM schema_migrations WHERE name = '0006_ledger_unsettled'`);
      await db.close();
      db = await openDb(store.location);
      ledger = await openLedger(db, { clock });
      expect(view(await recoveryScan(ledger))).toEqual(before);
      ledger.dispose();
      await db.close();
    } finally {
      await store.cleanup();
    }
  }, 60_000);

  it('a start reads only the unsettled command, however far back, never the settled history', async () => {
    const store = await backend.fresh();
    try {
      const db = await openDb(store.location);
      const ledger = await openLedger(db, { clock });
      await ledger.append(intent(0));
      const SETTLED = 3_000;
      for (let b = 1; b <= SETTLED; b += 500)
        await ledger.appendBatch(
          Array.from({ length: 500 }, (_, i) => [intent(b + i), outcome(b + i, 'completed')]).flat(),
        );
      const sql: Array<{ sql: string; rows: number }> = [];
      const engine = createEngine({ ledger: await openLedger(recordingDb(db, sql), { clock }), clock });
      const started = await engine.start();
      expect(started.unsettled).toEqual(['cmd_0']);
      expect(started.scanned).toBe(1);
      const reads = sql.filter((q) => /\bledger_entries\b/.test(q.sql) && /^\s*SELECT/i.test(q.sql));
      // By the command index, or the head / first row alone: never a range of the ledger.
      for (const q of reads) expect(q.sql).toMatch(/WHERE command_id = \?|ORDER BY seq DESC LIMIT 1|LIMIT 1$/);
      expect(reads.reduce((a, q) => a + q.rows, 0)).toBeLessThanOrEqual(3);
      await engine.stop();
      ledger.dispose();
      await db.close();
    } finally {
      await store.cleanup();
    }
  }, 120_000);
});
