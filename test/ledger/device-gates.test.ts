// Guarantees (HOST-091 across host processes), on every store dialect: an effectful `command.intent` appended with
// `claimGates` holds its device's gate in the store, atomically with the entry. Another intent for that device,
// from any handle, is refused MHS.HOST.DEVICE_GATE_CLOSED naming the holder, writes nothing and leaves the ledger
// available; receipts committed in the same group commit as a refused intent still commit. Reads never claim.
// Final receipts, command.not_sent, errors and settling reconciles reopen the gate; running/unknown keep it shut
// with their reason. The table always equals the effectful intents start-up recovery finds unsettled, and a store
// created before the table gets it filled from its entries.
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode, HostError, SimulatedClock } from '../../src/core/index.js';
import { scanLedger } from '../../src/engine/recovery.js';
import { GATE_OWNER, openDb, openLedger } from '../../src/ledger/index.js';
import type { Db, DurableLedger, LedgerAppend } from '../../src/ledger/index.js';
import { BACKENDS, openStore, sqliteBackend } from './helpers.js';
import type { Backend, StoreHandle } from './helpers.js';

const EP = 'mhs://gates/ep';
const intent = (cmd: string, device = 'dev-a', effect = 'actuate'): LedgerAppend => ({
  kind: 'command.intent',
  command_id: cmd,
  endpoint_id: EP,
  device_id: device,
  capability_id: 'cap.x.v1',
  input_digest: 'sha256:0',
  input: {},
  effect,
});
const receipt = (cmd: string, status: string): LedgerAppend => ({
  kind: 'receipt',
  command_id: cmd,
  endpoint_id: EP,
  receipt: { command_id: cmd, status },
});
const claim = { claimGates: true };

async function codeOf(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
    return 'resolved';
  } catch (err) {
    return err instanceof HostError ? { code: err.code, details: err.details } : String(err);
  }
}

const gates = async (l: DurableLedger) =>
  (await l.deviceGates()).map((g) => `${g.device_id}=${g.command_id}:${g.reason}`);

function suite(backend: Backend) {
  const handles: StoreHandle[] = [];
  const dbs: Db[] = [];
  afterEach(async () => {
    for (const d of dbs.splice(0)) await d.close();
    for (const h of handles.splice(0)) await h.cleanup();
  });
  async function fresh() {
    const h = await backend.fresh();
    handles.push(h);
    const s = await openStore(h.location);
    dbs.push(s.db);
    return { ...s, location: h.location };
  }
  async function another(location: string) {
    const s = await openStore(location);
    dbs.push(s.db);
    return s;
  }
  return { fresh, another };
}

describe.each(BACKENDS)('durable device gates: $name', (backend) => {
  const { fresh, another } = suite(backend);

  it('HOST-091: a held gate refuses another handle with DEVICE_GATE_CLOSED, nothing written, ledger available', async () => {
    const a = await fresh();
    const b = await another(a.location);
    await a.ledger.appendBatch([intent('cmd_1')], claim);
    expect(await a.ledger.deviceGates()).toEqual([
      expect.objectContaining({ endpoint_id: EP, device_id: 'dev-a', command_id: 'cmd_1', reason: 'in_flight' }),
    ]);
    expect((await a.ledger.deviceGates())[0]!.owner).toBe(GATE_OWNER);
    const head = await b.ledger.head();

    expect(await codeOf(b.ledger.appendBatch([intent('cmd_2')], claim))).toEqual({
      code: ErrorCode.HOST_DEVICE_GATE_CLOSED,
      details: expect.objectContaining({ device_id: 'dev-a', command_id: 'cmd_1', reason: 'in_flight', durable: true }),
    });
    expect(await b.ledger.byCommand('cmd_2')).toEqual([]);
    expect((await b.ledger.head()).seq).toBe(head.seq);
    expect(b.ledger.status().state).toBe('available');

    // Another device, a read on the held device, and an append without claimGates are not gated.
    await b.ledger.appendBatch([intent('cmd_3', 'dev-b')], claim);
    await b.ledger.appendBatch([intent('cmd_4', 'dev-a', 'read')], claim);
    expect(await gates(b.ledger)).toEqual(['dev-a=cmd_1:in_flight', 'dev-b=cmd_3:in_flight']);
    expect((await b.ledger.verify()).ok).toBe(true);
  });

  it('HOST-091: of two handles taking over an orphaned gate, exactly one does', async () => {
    const a = await fresh();
    const b = await another(a.location);
    await a.ledger.appendBatch([intent('cmd_1')], claim);
    await a.db.run("UPDATE device_gates SET owner = 'gone-host:1' WHERE command_id = 'cmd_1'");
    const won = await Promise.all([
      a.ledger.takeOverGate('cmd_1', 'gone-host:1'),
      b.ledger.takeOverGate('cmd_1', 'gone-host:1'),
    ]);
    expect(won.filter(Boolean)).toHaveLength(1);
    expect((await a.ledger.deviceGates())[0]).toMatchObject({ command_id: 'cmd_1', owner: GATE_OWNER });
    expect(await a.ledger.takeOverGate('cmd_1', 'gone-host:1')).toBe(false);
  });

  it('HOST-091: receipts committed together with a refused intent still commit', async () => {
    const a = await fresh();
    await a.ledger.appendBatch([intent('cmd_1', 'dev-a'), intent('cmd_2', 'dev-b')], claim);
    // Same tick: one group commit holding the receipt (first) and the refused intent.
    const [settled, refused] = await Promise.allSettled([
      a.ledger.appendBatch([receipt('cmd_2', 'completed')]),
      a.ledger.appendBatch([intent('cmd_3', 'dev-a')], claim),
    ]);
    expect(settled.status).toBe('fulfilled');
    expect(refused.status === 'rejected' && (refused.reason as HostError).code).toBe(ErrorCode.HOST_DEVICE_GATE_CLOSED);
    expect((await a.ledger.byCommand('cmd_2')).map((e) => e.kind)).toEqual(['command.intent', 'receipt']);
    expect(await gates(a.ledger)).toEqual(['dev-a=cmd_1:in_flight']);
    expect((await a.ledger.verify()).ok).toBe(true);
  });

  it('HOST-091: settling entries reopen the gate; running and unknown keep it shut with their reason', async () => {
    const { ledger } = await fresh();
    const cases: Array<[LedgerAppend[], string[]]> = [
      [[receipt('cmd_1', 'running')], ['dev-a=cmd_1:running']],
      [[{ kind: 'command.unknown', command_id: 'cmd_1', endpoint_id: EP }], ['dev-a=cmd_1:unknown']],
      [[{ kind: 'reconcile', command_id: 'cmd_1', outcome: 'running' }], ['dev-a=cmd_1:running']],
      [[{ kind: 'reconcile', command_id: 'cmd_1', outcome: 'receipt' }], []],
      [[intent('cmd_2')], ['dev-a=cmd_2:in_flight']],
      [[{ kind: 'command.not_sent', command_id: 'cmd_2', endpoint_id: EP }], []],
      [[intent('cmd_3')], ['dev-a=cmd_3:in_flight']],
      [[{ kind: 'error', phase: 'endpoint_fault', command_id: 'cmd_3', executed: false }], []],
      [[intent('cmd_4')], ['dev-a=cmd_4:in_flight']],
      [[receipt('cmd_4', 'failed')], []],
    ];
    await ledger.appendBatch([intent('cmd_1')], claim);
    for (const [entries, expected] of cases) {
      await ledger.appendBatch(entries, claim);
      expect(await gates(ledger)).toEqual(expected);
    }
  });
});

describe('durable device gates: the table and the recovery scan agree', () => {
  const { fresh } = suite(sqliteBackend);
  type Op = { t: 'intent'; dev: number; effect: 'actuate' | 'read' } | { t: 'outcome'; pick: number; kind: number };
  const OUTCOMES = ['completed', 'running', 'unknown', 'not_sent', 'reconciled', 'fault'] as const;
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({
      t: fc.constant('intent' as const),
      dev: fc.nat(2),
      effect: fc.constantFrom('actuate' as const, 'read' as const),
    }),
    fc.record({ t: fc.constant('outcome' as const), pick: fc.nat(), kind: fc.nat(OUTCOMES.length - 1) }),
  );
  const outcome = (cmd: string, kind: (typeof OUTCOMES)[number]): LedgerAppend => {
    if (kind === 'not_sent') return { kind: 'command.not_sent', command_id: cmd };
    if (kind === 'reconciled') return { kind: 'reconcile', command_id: cmd, outcome: 'not_executed' };
    if (kind === 'fault') return { kind: 'error', command_id: cmd, executed: false };
    return receipt(cmd, kind);
  };

  it('HOST-091: after any sequence of intents (refused ones included) and outcomes, the held gates are the unsettled effectful intents', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 30 }), async (ops) => {
        const { ledger, db } = await fresh();
        const sent: string[] = [];
        let n = 0;
        for (const o of ops) {
          if (o.t === 'intent') {
            const cmd = `cmd_${n++}`;
            const ok = await ledger.appendBatch([intent(cmd, `dev-${o.dev}`, o.effect)], claim).then(
              () => true,
              (e: HostError) => (expect(e.code).toBe(ErrorCode.HOST_DEVICE_GATE_CLOSED), false),
            );
            if (ok) sent.push(cmd);
          } else if (sent.length) await ledger.append(outcome(sent[o.pick % sent.length]!, OUTCOMES[o.kind]!));
        }
        const scan = await scanLedger(ledger);
        const expected = scan.unsettled
          .filter((p) => p.effectful)
          .map((p) => `${p.deviceId}=${p.commandId}`)
          .sort();
        expect((await ledger.deviceGates()).map((g) => `${g.device_id}=${g.command_id}`).sort()).toEqual(expected);
        await db.close();
      }),
      { numRuns: 30 },
    );
  }, 120_000);

  it('a store created before the table gets it filled from its entries on the next open', async () => {
    const { ledger, db, location } = await fresh();
    await ledger.appendBatch([intent('cmd_1', 'dev-a'), intent('cmd_2', 'dev-b'), intent('cmd_3', 'dev-c')]);
    await ledger.appendBatch([receipt('cmd_2', 'completed'), { kind: 'command.unknown', command_id: 'cmd_3' }]);
    await db.exec("DROP TABLE device_gates; DELETE FROM schema_migrations WHERE name = '0004_device_gates'");
    await db.close();
    const db2 = await openDb(location);
    try {
      const reopened = await openLedger(db2, { clock: new SimulatedClock() });
      expect(await gates(reopened)).toEqual(['dev-a=cmd_1:unknown', 'dev-c=cmd_3:unknown']);
    } finally {
      await db2.close();
    }
  });

  it('an older store that cannot be written still opens to be read (no table, appends refused)', async () => {
    const { ledger, db, location } = await fresh();
    await ledger.appendBatch([intent('cmd_1', 'dev-a')]);
    await db.exec("DROP TABLE device_gates; DELETE FROM schema_migrations WHERE name = '0004_device_gates'");
    await db.close();
    const ro = await openDb(location, { sqlite: { readonly: true } });
    try {
      const reopened = await openLedger(ro, { clock: new SimulatedClock() });
      expect(reopened.status().state).toBe('unavailable');
      expect((await reopened.byCommand('cmd_1')).map((e) => e.kind)).toEqual(['command.intent']);
      expect((await reopened.verify()).ok).toBe(true);
      expect(await codeOf(reopened.append(intent('cmd_2')))).toMatchObject({ code: ErrorCode.HOST_LEDGER_UNAVAILABLE });
    } finally {
      await ro.close();
    }
  });
});
