// Guarantees (v2 idempotency.md §"Layer 2: effect identity"; src/openwop/effects/), on a real SQLite file and, when
// MHS_TEST_PG_URL is set, a real PostgreSQL schema: the claim is atomic (of concurrent claims of one attempt exactly
// one wins); the guard claims before it sends and completes with the outcome after, so a re-executed call under the same
// identity is answered from the record without a send; a call whose attempt was claimed and never ended is refused
// `effect_outcome_unknown` without a send when it is not idempotent, and retried as attempt 2 of the same effect (the
// dead attempt released) when it is; a released attempt is followed by a new one; a replay fork reaches no effect. The
// run-id index of governed commands: a store whose ledger already holds intents gets them indexed (in ledger order)
// when the migration runs on open, later intents are indexed in their own transaction, and a run reads only its rows.
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode, RealClock } from '../../src/core/index.js';
import { openDb, openLedger } from '../../src/ledger/index.js';
import type { Db } from '../../src/ledger/index.js';
import { effectGuard } from '../../src/openwop/effects/effect-guard.js';
import type { EffectCall } from '../../src/openwop/effects/effect-guard.js';
import { RunEffectRecords, ensureRunEffects } from '../../src/openwop/effects/effect-records.js';
import { ensureMhsEffectIndex } from '../../src/openwop/effects/mhs-effect-index.js';
import { NodeFailure } from '../../src/openwop/node-registry.js';
import { BACKENDS } from '../ledger/helpers.js';
import type { StoreHandle } from '../ledger/helpers.js';

const clock = new RealClock();
const scope = { runId: 'run_a', nodeId: 'n1', activation: 1 };
const notReplay = async (): Promise<boolean> => false;
const call = (over: Partial<EffectCall> = {}): EffectCall => ({
  seam: 'mcp.client-call',
  name: 'k#0',
  request: { tool: 'noop' },
  idempotent: false,
  failed: () => 'unknown',
  ...over,
});

async function failureOf(p: Promise<unknown>): Promise<NodeFailure> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(NodeFailure);
    return err as NodeFailure;
  }
  throw new Error('expected a NodeFailure');
}

describe.each(BACKENDS)('effect records on $name', (backend) => {
  let h: StoreHandle;
  let db: Db;
  afterEach(async () => {
    await db?.close();
    await h?.cleanup();
  });
  async function open(): Promise<RunEffectRecords> {
    h = await backend.fresh();
    db = await openDb(h.location);
    await ensureRunEffects(db);
    return new RunEffectRecords(db, clock);
  }

  it('the claim is atomic: of concurrent claims of one attempt exactly one wins', async () => {
    const records = await open();
    const claim = { ...scope, effectId: 'eff-race', attempt: 1, seam: 'mcp.client-call' as const, requestDigest: 'd' };
    const won = await Promise.all(Array.from({ length: 6 }, () => records.claim(claim)));
    expect(won.filter(Boolean)).toHaveLength(1);
    expect(await records.attempts('eff-race')).toMatchObject([{ attempt: 1, state: 'claimed' }]);
  });

  it('claims before the send, completes after; a re-executed call is answered from the record', async () => {
    const records = await open();
    const guard = effectGuard(records, scope, notReplay);
    let sends = 0;
    const states: string[] = [];
    const out = await guard.perform(call(), async () => {
      sends++;
      states.push(...(await records.forRun('run_a')).map((r) => r.state));
      return { content: [{ type: 'text', text: 'done' }] };
    });
    expect(states).toEqual(['claimed']);
    expect(out).toEqual({ content: [{ type: 'text', text: 'done' }] });
    // A fresh guard of the same execution (a node re-executed after a restart) finds the completed effect.
    const again = await effectGuard(records, scope, notReplay).perform(call(), async () => {
      sends++;
      return {};
    });
    expect(again).toEqual(out);
    expect(sends).toBe(1);
    expect(await records.forRun('run_a')).toMatchObject([{ attempt: 1, state: 'completed', seam: 'mcp.client-call' }]);
    // Another activation is another effect.
    await effectGuard(records, { ...scope, activation: 2 }, notReplay).perform(call(), async () => ({}));
    expect((await records.forRun('run_a')).map((r) => r.attempt)).toEqual([1, 1]);
    expect(await records.forRun('run_other')).toEqual([]);
  });

  it('a claimed, never-ended attempt: refused without a send, or retried as attempt 2 when idempotent', async () => {
    const records = await open();
    const hang = new Promise<never>(() => undefined);
    // The executor "dies" mid-call: its send never settles.
    void effectGuard(records, scope, notReplay).perform(call(), () => hang);
    void effectGuard(records, scope, notReplay).perform(
      call({ seam: 'provider.model-call', name: 'turn:0' }),
      () => hang,
    );
    await expect.poll(async () => (await records.forRun('run_a')).length).toBe(2);
    let sends = 0;
    const refused = await failureOf(
      effectGuard(records, scope, notReplay).perform(call(), async () => {
        sends++;
        return {};
      }),
    );
    expect(refused.code).toBe(ErrorCode.EFFECT_OUTCOME_UNKNOWN);
    expect(refused.details).toMatchObject({ seam: 'mcp.client-call', attempt: 1 });
    expect(sends).toBe(0);
    const answer = await effectGuard(records, scope, notReplay).perform(
      call({ seam: 'provider.model-call', name: 'turn:0', idempotent: true }),
      async () => {
        sends++;
        return { kind: 'final', text: 'ok' };
      },
    );
    expect(answer).toEqual({ kind: 'final', text: 'ok' });
    expect(sends).toBe(1);
    const rows = await records.forRun('run_a');
    expect(rows.map((r) => [r.seam, r.attempt, r.state])).toEqual([
      ['mcp.client-call', 1, 'claimed'],
      ['provider.model-call', 1, 'released'],
      ['provider.model-call', 2, 'completed'],
    ]);
    expect(rows[1]!.effectId).toBe(rows[2]!.effectId);
  });

  it('a released attempt is followed by a new one; a replay fork reaches no effect', async () => {
    const records = await open();
    const released = call({ failed: () => 'released' });
    await expect(
      effectGuard(records, scope, notReplay).perform(released, () => Promise.reject(new Error('refused'))),
    ).rejects.toThrow('refused');
    await effectGuard(records, scope, notReplay).perform(released, async () => ({ ok: true }));
    expect((await records.forRun('run_a')).map((r) => [r.attempt, r.state])).toEqual([
      [1, 'released'],
      [2, 'completed'],
    ]);
    let sends = 0;
    const replay = await failureOf(
      effectGuard(records, { ...scope, runId: 'run_fork' }, async () => true).perform(call(), async () => {
        sends++;
        return {};
      }),
    );
    expect(replay.code).toBe(ErrorCode.REPLAY_SOURCE_MISSING);
    expect(sends).toBe(0);
    expect(await records.forRun('run_fork')).toEqual([]);
  });

  it('the governed-command index: existing intents on open, later ones in their own transaction, by run', async () => {
    h = await backend.fresh();
    db = await openDb(h.location);
    const ledger = await openLedger(db, { clock });
    const intent = (command_id: string, run_id?: string) =>
      ledger.append({
        kind: 'command.intent',
        command_id,
        endpoint_id: 'mhs://x',
        device_id: 'd',
        ...(run_id ? { run_id, node_id: 'warm' } : {}),
      });
    // Written before the index exists (a store of an earlier version).
    await intent('cmd_old1', 'run_a');
    await intent('cmd_plain');
    await intent('cmd_old2', 'run_b');
    await ensureMhsEffectIndex(db);
    await ensureMhsEffectIndex(db); // applied once
    await intent('cmd_new', 'run_a');
    const records = new RunEffectRecords(db, clock);
    expect((await records.forRun('run_a')).map((r) => [r.effectId, r.seam, r.nodeId, r.providerKey])).toEqual([
      ['cmd_old1', 'mhs.governed-call', 'warm', 'cmd_old1'],
      ['cmd_new', 'mhs.governed-call', 'warm', 'cmd_new'],
    ]);
    expect((await records.forRun('run_b')).map((r) => r.effectId)).toEqual(['cmd_old2']);
    ledger.dispose();
  });
});
