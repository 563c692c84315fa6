// HOST-091 recovery of a ledger without the unsettled side tables reads only the ledger tail: the mark left by a start never passes an unsettled intent, so a
// scan from the mark finds exactly the commands a scan of the whole ledger finds (property over random histories on
// a real SQLite ledger), and a restarted engine reads only what was appended since (the mark is stored in the Db).
import fc from 'fast-check';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RealClock } from '../../src/core/index.js';
import { createEngine, openRecoveryMarkStore } from '../../src/engine/index.js';
import { scanLedger } from '../../src/engine/recovery.js';
import { openDb, openLedger } from '../../src/ledger/index.js';
import type { Ledger, LedgerAppend } from '../../src/ledger/index.js';

const clock = new RealClock();
const tmp = () => join(mkdtempSync(join(tmpdir(), 'mhs-mark-')), 'host.db');

const intent = (n: number): LedgerAppend => ({
  kind: 'command.intent',
  command_id: `cmd_${n}`,
  endpoint_id: 'mhs://mark/ep',
  device_id: 'dev',
  capability_id: 'cap.x.v1',
  tool: 'dev__cap_x_v1',
  session_id: 'ses_x',
  input_digest: 'sha256:0',
  input: {},
  effect: 'actuate',
  deadline_ms: 100,
});
const outcome = (n: number, how: 'completed' | 'running' | 'not_sent'): LedgerAppend =>
  how === 'not_sent'
    ? { kind: 'command.not_sent', command_id: `cmd_${n}`, endpoint_id: 'mhs://mark/ep' }
    : { kind: 'receipt', command_id: `cmd_${n}`, endpoint_id: 'mhs://mark/ep', receipt: { status: how } };

type Op = { t: 'intent' } | { t: 'outcome'; pick: number; how: 'completed' | 'running' | 'not_sent' };
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.constant<Op>({ t: 'intent' }),
  fc.record({
    t: fc.constant('outcome' as const),
    pick: fc.nat(),
    how: fc.constantFrom('completed' as const, 'running' as const, 'not_sent' as const),
  }),
);

async function apply(ledger: Ledger, ops: Op[], state: { n: number }): Promise<void> {
  for (const o of ops) {
    if (o.t === 'intent') await ledger.append(intent(state.n++));
    else if (state.n > 0) await ledger.append(outcome(o.pick % state.n, o.how));
  }
}

const ids = (s: Awaited<ReturnType<typeof scanLedger>>) => s.unsettled.map((p) => p.commandId).sort();

describe('recovery mark', () => {
  it('HOST-091: a scan from the mark finds the same unsettled commands as a scan of the whole ledger', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 25 }), fc.array(op, { maxLength: 25 }), async (before, after) => {
        const db = await openDb(tmp());
        try {
          const ledger = await openLedger(db, { clock });
          const state = { n: 0 };
          await apply(ledger, before, state);
          const first = await scanLedger(ledger);
          await apply(ledger, after, state);
          const full = await scanLedger(ledger);
          const tail = await scanLedger(ledger, first.nextFrom);
          expect(ids(tail)).toEqual(ids(full));
          expect(tail.nextFrom).toBe(full.nextFrom);
        } finally {
          await db.close();
        }
      }),
      { numRuns: 40 },
    );
  }, 120_000);

  it('a ledger without the unsettled side tables is read from the mark, and still finds an old unsettled intent', async () => {
    // A ledger that only has the Ledger interface (no `unsettledIntents`), over a real SQLite ledger: the fallback.
    const plain = (l: Ledger): Ledger => ({
      append: (e) => l.append(e),
      appendBatch: (es, o) => l.appendBatch(es, o),
      head: () => l.head(),
      range: (a, b) => l.range(a, b),
      byCommand: (c) => l.byCommand(c),
      bySession: (s) => l.bySession(s),
      verify: () => l.verify(),
    });
    const path = tmp();
    const open = async () => {
      const db = await openDb(path);
      const ledger = await openLedger(db, { clock });
      const engine = createEngine({ ledger: plain(ledger), clock, recoveryMark: await openRecoveryMarkStore(db) });
      return { db, ledger, engine };
    };
    const a = await open();
    for (let i = 0; i < 20; i++) await a.ledger.append(intent(i));
    for (let i = 0; i < 20; i++) if (i !== 7) await a.ledger.append(outcome(i, 'completed'));
    const head = (await a.ledger.range(0)).length;
    const r1 = await a.engine.start();
    expect(r1.scanned).toBe(head);
    expect(r1.unsettled).toEqual(['cmd_7']);
    await a.engine.stop();
    for (let i = 20; i < 30; i++) await a.ledger.append(intent(i));
    for (let i = 20; i < 30; i++) await a.ledger.append(outcome(i, 'completed'));
    await a.db.close();

    const b = await open();
    const r2 = await b.engine.start();
    // From cmd_7's intent on (it is still unsettled), not from the genesis.
    const seq7 = (await b.ledger.byCommand('cmd_7'))[0]!.seq;
    expect(r2.scanned).toBe((await b.ledger.range(seq7)).length);
    expect(r2.scanned).toBeLessThan((await b.ledger.range(0)).length);
    expect(r2.unsettled).toEqual(['cmd_7']);
    await b.ledger.append(outcome(7, 'not_sent'));
    await b.engine.stop();
    await b.db.close();

    const c = await open();
    const r3 = await c.engine.start();
    expect(r3.unsettled).toEqual([]);
    // Every intent is settled: the next start reads nothing it has read before.
    expect((await c.engine.start()).scanned).toBe(0);
    await c.engine.stop();
    await c.db.close();
  });
});
