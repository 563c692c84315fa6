// Guarantees (issue 22 item 4; HOST-056): retention is a policy section (`retention`: ledger_s, receipts_s,
// interval_s, enabled) with defaults, validated (a bad section is MHS.HOST.CONFIG_INVALID naming the field), and
// applied on a schedule by an owned actor with no operator command: each prune is one `retention.prune` entry, the
// ledger then starts with the checkpoint it anchors on and verifies. Nothing at or after an unsettled intent, nor
// a receipt younger than receipts_s, is pruned. The schedule is data (the last checkpoint's time + interval), so a
// new actor over the same store keeps it. A process killed mid-prune leaves a store that verifies, with the prefix
// wholly pruned or wholly kept, and the next run records a prune whose entry the crash lost. `mhs-host serve
// --policy` with a short retention prunes by itself.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it, test } from 'vitest';
import { ErrorCode, HostError, RealClock, SimulatedClock } from '../../src/core/index.js';
import { openDb, openLedger, unrecordedPrune } from '../../src/ledger/index.js';
import type { Db, DurableLedger, LedgerEntry } from '../../src/ledger/index.js';
import { RetentionActor } from '../../src/engine/retention-actor.js';
import type { RetentionRun } from '../../src/engine/retention-actor.js';
import { DEFAULT_RETENTION, parsePolicyConfig, retentionOf } from '../../src/policy/index.js';
import type { RetentionPolicy } from '../../src/policy/index.js';
import { entryArgs } from '../helpers/cli-entry.js';
import { cli, ledgerEntries } from '../helpers/mhs-host.js';
import { BACKENDS, REPO, tempDir } from '../ledger/helpers.js';
import type { StoreHandle } from '../ledger/helpers.js';
import { serve, tempDb } from '../server/serve-helpers.js';

const SHORT: RetentionPolicy = { enabled: true, ledger_s: 1, receipts_s: 1, interval_s: 1 };

function codeOf(fn: () => unknown): { code: string; details: Record<string, unknown> } {
  try {
    fn();
  } catch (err) {
    if (err instanceof HostError) return { code: err.code, details: err.details };
    throw err;
  }
  return { code: 'none', details: {} };
}

describe('HOST-056: the retention section of the policy', () => {
  test('HOST-056: defaults fill an absent section; a bad one is MHS.HOST.CONFIG_INVALID naming the field', () => {
    expect(retentionOf(parsePolicyConfig({}))).toEqual(DEFAULT_RETENTION);
    expect(retentionOf(parsePolicyConfig({ retention: { ledger_s: 10 } }))).toEqual({
      ...DEFAULT_RETENTION,
      ledger_s: 10,
    });
    for (const [bad, path] of [
      [{ interval_s: 0 }, '/retention/interval_s'],
      [{ ledger_s: 'a week' }, '/retention/ledger_s'],
      [{ receipts_s: 1.5 }, '/retention/receipts_s'],
      [{ keep: 'forever' }, '/retention'],
    ] as const) {
      const r = codeOf(() => parsePolicyConfig({ retention: bad }));
      expect(r.code).toBe(ErrorCode.HOST_CONFIG_INVALID);
      expect((r.details.errors as Array<{ path: string }>).map((e) => e.path)).toContain(path);
    }
  });
});

describe.each(BACKENDS)('HOST-056: retention on a schedule ($name)', (backend) => {
  const open: Array<{ db: Db; ledger: DurableLedger }> = [];
  const handles: StoreHandle[] = [];
  afterEach(async () => {
    for (const o of open.splice(0)) {
      o.ledger.dispose();
      await o.db.close();
    }
    for (const h of handles.splice(0)) await h.cleanup();
  });

  async function fresh(clock: SimulatedClock | RealClock) {
    const h = await backend.fresh();
    handles.push(h);
    const db = await openDb(h.location);
    const ledger = await openLedger(db, { clock });
    open.push({ db, ledger });
    return { db, ledger, location: h.location };
  }

  /** An actor over the store whose runs are reported to `runs`; each timer-driven run resolves `next()`. */
  function actor(db: Db, ledger: DurableLedger, clock: SimulatedClock, policy: RetentionPolicy) {
    const runs: RetentionRun[] = [];
    let wake: (() => void) | undefined;
    const errors: HostError[] = [];
    const a = new RetentionActor({
      db,
      ledger,
      clock,
      policy: async () => policy,
      onRun: (r) => {
        runs.push(r);
        wake?.();
      },
      onError: (e) => errors.push(e),
    });
    /** Advances the clock by `ms` and waits for the run it fires. */
    const tick = (ms: number) =>
      new Promise<RetentionRun>((resolve) => {
        const before = runs.length;
        wake = () => {
          if (runs.length > before) resolve(runs.at(-1)!);
        };
        clock.advance(ms);
      });
    return { a, runs, tick, errors };
  }

  it('HOST-056: prunes by itself on the schedule, records one retention.prune, and the ledger verifies', async () => {
    const clock = new SimulatedClock();
    const { db, ledger } = await fresh(clock);
    for (let i = 0; i < 20; i++) await ledger.append({ kind: 'tool_call', call: `c${i}` });
    const { a, tick, errors } = actor(db, ledger, clock, SHORT);
    await a.start();
    const first = await tick(1_000); // the first run only appends the checkpoint a later run prunes up to
    expect(first.pruned).toBeUndefined();
    expect(first.checkpointSeq).toBeGreaterThan(0);
    await ledger.append({ kind: 'tool_call', call: 'later' });
    const second = await tick(1_000);
    expect(second.pruned?.checkpoint.seq).toBe(first.checkpointSeq);
    await a.stop();
    expect(errors).toEqual([]);
    const entries = await ledger.range(0);
    expect(entries[0]).toMatchObject({ kind: 'checkpoint', seq: first.checkpointSeq });
    const prunes = entries.filter((e) => e.kind === 'retention.prune');
    expect(prunes).toHaveLength(1);
    expect(prunes[0]).toMatchObject({
      scheduled: true,
      pruned: first.checkpointSeq,
      checkpoint: { seq: first.checkpointSeq },
      policy: { ledger_s: 1, receipts_s: 1 },
    });
    expect((await ledger.verify()).ok).toBe(true);
    // Then the prefix up to the second checkpoint goes; after that an idle ledger stays still (no checkpoint
    // for bookkeeping alone, nothing more pruned).
    clock.advance(5_000);
    expect((await a.runOnce())?.pruned).toBeDefined();
    clock.advance(5_000);
    const idle = await a.runOnce();
    expect(idle?.pruned).toBeUndefined();
    expect(idle?.checkpointSeq).toBeUndefined();
    expect((await ledger.verify()).ok).toBe(true);
  });

  it('HOST-056 HOST-091: never prunes an unsettled intent, nor a receipt younger than receipts_s', async () => {
    const clock = new SimulatedClock();
    const { db, ledger } = await fresh(clock);
    await ledger.append({ kind: 'tool_call', call: 'old' });
    const unsettled = await ledger.append({ kind: 'command.intent', command_id: 'cmd_unsettled', endpoint_id: 'e' });
    await ledger.append({ kind: 'tool_call', call: 'after-intent' });
    const { a } = actor(db, ledger, clock, SHORT);
    await a.runOnce(); // checkpoint after the unsettled intent
    clock.advance(10_000);
    await a.runOnce();
    expect((await ledger.first()).seq).toBeLessThanOrEqual(unsettled.seq);
    expect(await ledger.byCommand('cmd_unsettled')).toHaveLength(1);

    const c2 = new SimulatedClock();
    const s2 = await fresh(c2);
    const receipt = await s2.ledger.append({ kind: 'receipt', command_id: 'cmd_r', endpoint_id: 'e' });
    const keepReceipts = actor(s2.db, s2.ledger, c2, { ...SHORT, receipts_s: 3_600 });
    await keepReceipts.a.runOnce();
    c2.advance(10_000);
    const r = await keepReceipts.a.runOnce();
    expect(r?.pruned).toBeUndefined();
    expect((await s2.ledger.byCommand('cmd_r')).map((e) => e.seq)).toEqual([receipt.seq]);
    c2.advance(3_600_000);
    const later = await keepReceipts.a.runOnce();
    expect(later?.pruned).toBeDefined();
    expect(await s2.ledger.byCommand('cmd_r')).toEqual([]);
    expect((await s2.ledger.verify()).ok).toBe(true);
  });

  it('HOST-056: the due time is data: a new actor over the store runs at the last checkpoint + interval', async () => {
    const clock = new SimulatedClock();
    const { db, ledger } = await fresh(clock);
    await ledger.append({ kind: 'tool_call', call: 'x' });
    await ledger.checkpoint({ reason: 'operator' });
    clock.advance(3_000_000); // the host was down longer than the interval
    const { a, tick } = actor(db, ledger, clock, { ...SHORT, interval_s: 3_600 });
    await a.start();
    // The checkpoint + 3 600 s is 600 s from now; a schedule started afresh would wait the whole hour.
    const run = await tick(600_000);
    await a.stop();
    expect(run.pruned).toBeDefined();
  });

  it('HOST-056: SIGKILL during a scheduled prune leaves a store that verifies; the next run records the prune', async () => {
    const h = await backend.fresh();
    handles.push(h);
    const child = spawn(process.execPath, [...entryArgs('test/engine/fixtures/prune-child.ts'), h.location], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    const lines = createInterface({ input: child.stdout });
    let killed = false;
    await new Promise<void>((resolve) => {
      lines.on('line', (l) => {
        if (l === 'pruning') {
          killed = child.kill('SIGKILL');
          resolve();
        }
      });
      lines.on('close', () => resolve());
    });
    await exited;
    expect(killed).toBe(true);
    const db = await openDb(h.location);
    const ledger = await openLedger(db, { clock: new RealClock() });
    open.push({ db, ledger });
    expect((await ledger.verify()).ok).toBe(true);
    const entries: LedgerEntry[] = await ledger.range(0);
    const cp = entries.find((e) => e.kind === 'checkpoint')!;
    // All or nothing: the ledger starts with genesis (nothing pruned) or with the checkpoint (all before it).
    expect(entries[0]!.kind === 'genesis' || entries[0]!.seq === cp.seq).toBe(true);
    const b = new RetentionActor({
      db,
      ledger,
      clock: new RealClock(),
      policy: async () => ({ ...SHORT, ledger_s: 86_400, receipts_s: 86_400 }),
    });
    const run = await b.runOnce();
    if (entries[0]!.kind === 'checkpoint' && !entries.some((e) => e.kind === 'retention.prune'))
      expect(run?.recordedLate).toBe(cp.seq);
    expect(await unrecordedPrune(db, ledger)).toBeUndefined();
    expect((await ledger.verify()).ok).toBe(true);
  }, 60_000);
});

describe('HOST-056: serve applies the policy retention with no operator command', () => {
  test('HOST-056: `serve --policy` with a bad retention section does not start and names the field', async () => {
    const t = tempDir('mhs-retention-bad-');
    try {
      const policy = join(t.dir, 'policy.json');
      writeFileSync(policy, JSON.stringify({ retention: { interval_s: 0 } }));
      const r = await cli([
        'serve',
        '--port',
        '0',
        '--no-workflows',
        '--db',
        join(t.dir, 'host.db'),
        '--policy',
        policy,
      ]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(ErrorCode.HOST_CONFIG_INVALID);
      expect(r.stderr).toContain('/retention/interval_s');
    } finally {
      t.cleanup();
    }
  }, 60_000);

  test('HOST-056: `serve --policy` with a short retention prunes, and the store verifies afterwards', async () => {
    const t = tempDir('mhs-retention-');
    const db = tempDb();
    const policy = join(t.dir, 'policy.json');
    writeFileSync(policy, JSON.stringify({ retention: SHORT }));
    const srv = await serve(db, ['--no-workflows', '--policy', policy]);
    try {
      let prune: LedgerEntry | undefined;
      while (!prune) {
        prune = (await ledgerEntries(db)).find((e) => e.kind === 'retention.prune');
        if (!prune) await new Promise((r) => setTimeout(r, 200));
      }
      expect(prune).toMatchObject({ scheduled: true });
    } finally {
      await srv.stop();
      t.cleanup();
    }
    const store = await openDb(db);
    try {
      const ledger = await openLedger(store, { clock: new RealClock() });
      expect((await ledger.first()).kind).toBe('checkpoint');
      expect((await ledger.verify()).ok).toBe(true);
      ledger.dispose();
    } finally {
      await store.close();
    }
  }, 60_000);
});
