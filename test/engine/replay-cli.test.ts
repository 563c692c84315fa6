// Guarantees (HOST-057, HOST-085, wire contract §10): a real multi-endpoint task recorded on simulator processes
// yields, from its exported package, a replay plan with every command's capability, input, input_digest and
// command_id, the manifest digests, the disclosed device seeds and the state-hash sequence; `mhs-host replay run`
// drives simulators started with `--replay` (bundles cut from the package) through the governed path and reports
// `match`, with every session, ledger entry and receipt of the run labelled replay (and the replay's own export
// verifying); a plan with a changed input is reported `diverged` (exit 1) with the endpoint's MHS.REPLAY.DIVERGED
// and its details.expected; an endpoint not in replay mode is refused with MHS.HOST.REPLAY_REFUSED before any
// command is sent (its execution counters do not move); bad input fails with stable codes.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { H } from '../../src/core/index.js';
import {
  checkPlan,
  loadPlan,
  planCommands,
  planFromPackage,
  planProblems,
  replayBundle,
} from '../../src/engine/index.js';
import type { ReplayPlan, ReplayReport } from '../../src/engine/index.js';
import { verifyPackage } from '../../src/ledger/index.js';
import type { LedgerEntry } from '../../src/ledger/index.js';
import { cli, ledgerEntries, startMhsHost } from '../helpers/mhs-host.js';
import type { MhsHost } from '../helpers/mhs-host.js';
import { callMhs, connectMcpClient } from '../helpers/sim.js';

// Child processes start slowly on a loaded machine (2 cores shared with other suites).
vi.setConfig({ hookTimeout: 180_000, testTimeout: 120_000 });

const BELT = 'mhs://test/replay-belt';
const THERMO = 'mhs://test/replay-thermo';
const dir = mkdtempSync(join(tmpdir(), 'mhs-replay-'));
const pkg = join(dir, 'pkg');
const STEPS = [
  { endpoint: BELT, device: 'conveyor-workcell', capability: 'cap.world.step.v1', input: { ticks: 2 } },
  { endpoint: THERMO, device: 'thermostat', capability: 'cap.thermal.setpoint.v1', input: { setpoint_c: 31 } },
  { endpoint: BELT, device: 'conveyor-workcell', capability: 'cap.world.step.v1', input: { ticks: 5 } },
  { endpoint: THERMO, device: 'thermostat', capability: 'cap.thermal.read.v1', input: {} },
  { endpoint: BELT, device: 'conveyor-workcell', capability: 'cap.world.step.v1', input: { ticks: 1 } },
];
const hosts: Array<MhsHost<string>> = [];
let rec: MhsHost<'belt' | 'thermo'>;
let plan: ReplayPlan;
let recorded: LedgerEntry[];

/** Plan index of the belt step with `ticks: 5` (the command the tamper tests change). */
const ticks5 = (): number => planCommands(plan).findIndex((c) => (c.input as { ticks?: number }).ticks === 5);

/** Simulators in replay mode from bundles cut from the package, with an enabled connector each, in a fresh store. */
async function replayHost(prefix: string): Promise<MhsHost<'belt' | 'thermo'>> {
  const flags = (id: string, extra: string[]) => {
    const f = join(dir, `${prefix}-${id.replace(/\W/g, '_')}.json`);
    return replayBundle(pkg, id, plan).then((b) => {
      writeFileSync(f, JSON.stringify(b));
      return ['--replay', f, '--endpoint-id', id, ...extra];
    });
  };
  const h = await startMhsHost({
    prefix,
    serve: false,
    sims: {
      belt: ['conveyor', await flags(BELT, ['--seed', '7'])],
      thermo: ['thermostat', await flags(THERMO, ['--time-scale', '20'])],
    },
  });
  hosts.push(h);
  return h;
}

beforeAll(async () => {
  rec = await startMhsHost({
    prefix: 'rec',
    serve: false,
    sims: {
      belt: ['conveyor', ['--endpoint-id', BELT, '--seed', '7']],
      thermo: ['thermostat', ['--endpoint-id', THERMO, '--time-scale', '20']],
    },
  });
  hosts.push(rec);
  const task = join(dir, 'task.json');
  writeFileSync(task, JSON.stringify({ name: 'replay source', steps: STEPS }));
  const run = await cli(['run-task', task, '--db', rec.dbPath, '--no-receipts']);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  const exp = await cli(['ledger', 'export', '--db', rec.dbPath, '--out', pkg]);
  expect(exp.code).toBe(0);
  recorded = await ledgerEntries(rec.dbPath);
  plan = await planFromPackage(pkg);
});
afterAll(async () => {
  await Promise.all(hosts.map((h) => h.stop()));
  rmSync(dir, { recursive: true, force: true });
});

describe('replay plan (HOST-057)', () => {
  test('HOST-057: the plan holds every command with inputs, digests and ids, manifest digests, seeds and state hashes', async () => {
    const cmds = planCommands(plan);
    expect(plan.tasks).toHaveLength(1);
    expect(plan.tasks[0]?.name).toBe('replay source');
    // Endpoints run side by side (HOST-082): the recorded order is per endpoint, in ledger (intent) order.
    for (const ep of [BELT, THERMO])
      expect(cmds.filter((c) => c.endpoint_id === ep).map((c) => [c.capability_id, c.input])).toEqual(
        STEPS.filter((s) => s.endpoint === ep).map((s) => [s.capability, s.input]),
      );
    expect(cmds.map((c) => c.seq)).toEqual([...cmds.map((c) => c.seq)].sort((a, b) => a - b));
    const intents = recorded.filter((e) => e.kind === 'command.intent');
    const receipts = recorded.filter((e) => e.kind === 'receipt' && (e['status'] as string) !== 'running');
    for (const c of cmds) {
      expect(c.input_digest).toBe(H(c.input));
      expect(intents.find((i) => i['command_id'] === c.command_id)?.['input_digest']).toBe(c.input_digest);
      const r = receipts.find((x) => x['command_id'] === c.command_id)?.['receipt'] as Record<string, unknown>;
      expect(c.expected).toMatchObject({ status: 'completed', state_hash: r['state_hash'], revisions: r['revisions'] });
      expect(c.evidence_in_bundle).toBe(true);
    }
    const belt = plan.endpoints.find((e) => e.endpoint_id === BELT)!;
    const disclosed = recorded.find((e) => e.kind === 'disclosure' && e['endpoint_id'] === BELT)!;
    expect(belt.manifest_digests).toEqual([disclosed['manifest_digest']]);
    expect(belt.devices).toEqual([
      { device_id: 'conveyor-workcell', mode: 'simulated', determinism_kind: 'seeded', seed: 7 },
    ]);
    expect(belt.state_hashes.map((s) => s.state_hash)).toEqual(
      cmds.filter((c) => c.endpoint_id === BELT).map((c) => c.expected.state_hash),
    );
    expect(plan.missing.join('\n')).toContain('per-command seeds');
    expect(await checkPlan(plan, pkg)).toEqual({ ok: true, problems: [] });
    const taskId = plan.tasks[0]!.task_id!;
    expect(planCommands(await loadPlan(pkg, taskId))).toEqual(cmds);
  });

  test('HOST-057: a plan file checks offline; an edited one does not (MHS.HOST.REPLAY_PLAN_INVALID)', async () => {
    const file = join(dir, 'plan.json');
    const p = await cli(['replay', 'plan', pkg, '--out', file]);
    expect(p.code).toBe(0);
    expect((await loadPlan(file)).plan_digest).toBe(plan.plan_digest);
    const one = await loadPlan(file, plan.tasks[0]!.task_id!);
    expect(planProblems(one)).toEqual([]);
    expect(one.source.task_id).toBe(plan.tasks[0]!.task_id);
    const edited = JSON.parse(readFileSync(file, 'utf8')) as ReplayPlan;
    (edited.tasks[0]!.commands[ticks5()]!.input as { ticks: number }).ticks = 6;
    writeFileSync(join(dir, 'edited.json'), JSON.stringify(edited));
    const bad = await cli(['replay', 'check', join(dir, 'edited.json'), '--package', pkg]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('MHS.HOST.REPLAY_PLAN_INVALID');
    expect(bad.stdout).toContain('input_digest is not H(input)');
  });
});

describe('replay run (HOST-085)', () => {
  test('HOST-085: replay against --replay simulators matches, and everything of the run is labelled replay', async () => {
    const h = await replayHost('rpl');
    const before = (await ledgerEntries(h.dbPath)).length;
    // The belt by its connector id (`--endpoint RECORDED=REF`), the thermostat by the recorded endpoint id.
    const r = await cli([
      'replay',
      'run',
      pkg,
      '--db',
      h.dbPath,
      '--json',
      '--endpoint',
      `${BELT}=${h.connectors.belt}`,
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as ReplayReport;
    expect(report).toMatchObject({
      result: 'match',
      commands: 5,
      compared: 5,
      first_divergence: null,
      plan_problems: [],
      label: { execution: 'replay', replay_of: plan.plan_digest },
    });
    for (const s of report.state_hashes) expect(s.got).toEqual(s.expected);

    const run = (await ledgerEntries(h.dbPath)).slice(before);
    expect(run.length).toBeGreaterThan(10);
    for (const e of run) expect(e, e.kind).toMatchObject({ execution: 'replay', replay_of: plan.plan_digest });
    const kinds = new Set(run.map((e) => e.kind));
    for (const k of ['replay.start', 'session.open', 'command.intent', 'receipt', 'parent_action', 'replay.end'])
      expect(kinds.has(k as never), k).toBe(true);
    for (const e of run.filter((x) => x.kind === 'session.open')) expect(e['mode']).toBe('replay');
    for (const e of run.filter((x) => x.kind === 'receipt'))
      expect((e['receipt'] as { mode: string }).mode).toBe('replay');

    // The replay's own evidence package verifies and carries the replay labels and replay receipts.
    const out = join(dir, 'replay-pkg');
    expect((await cli(['ledger', 'export', '--db', h.dbPath, '--out', out])).code).toBe(0);
    expect((await verifyPackage(out)).ok).toBe(true);
    const ev = readFileSync(join(out, 'endpoints', BELT.replace(/[^A-Za-z0-9._-]/g, '_'), 'evidence.jsonl'), 'utf8');
    const evReceipts = ev
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { kind: string; body: { mode: string } })
      .filter((e) => e.kind === 'receipt');
    expect(evReceipts).toHaveLength(3);
    for (const e of evReceipts) expect(e.body.mode).toBe('replay');
  });

  test('HOST-085: a plan with a changed input diverges (exit 1) with MHS.REPLAY.DIVERGED and details.expected', async () => {
    const h = await replayHost('tmp');
    const edited = structuredClone(plan);
    const at = ticks5();
    (edited.tasks[0]!.commands[at]!.input as { ticks: number }).ticks = 6;
    const file = join(dir, 'tampered.json');
    writeFileSync(file, JSON.stringify(edited));
    const r = await cli(['replay', 'run', file, '--db', h.dbPath, '--json']);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as ReplayReport;
    expect(report.result).toBe('diverged');
    expect(report.plan_problems).toContain('plan_digest does not recompute (the plan was edited)');
    const want = planCommands(plan)[at]!;
    expect(report.first_divergence).toMatchObject({
      index: at,
      command_id: want.command_id,
      field: 'receipt.input_digest',
      expected: want.input_digest,
      got: H({ ticks: 6 }),
      error: {
        mhs_code: 'MHS.REPLAY.DIVERGED',
        details: { expected: { capability_id: 'cap.world.step.v1', input_digest: want.input_digest } },
      },
    });
    const end = (await ledgerEntries(h.dbPath)).find((e) => e.kind === 'replay.end');
    expect(end).toMatchObject({ result: 'diverged', execution: 'replay' });

    // A capability the endpoint does not have: refused by the host before anything is sent, reported as diverged.
    const bogus = structuredClone(plan);
    bogus.tasks[0]!.commands[0]!.capability_id = 'cap.bogus.v1';
    writeFileSync(file, JSON.stringify(bogus));
    const b = await cli(['replay', 'run', file, '--db', h.dbPath, '--json']);
    expect(b.code).toBe(1);
    expect((JSON.parse(b.stdout) as ReplayReport).first_divergence).toMatchObject({
      index: 0,
      field: 'outcome',
      got: 'MHS.SCHEMA.INVALID_INPUT',
    });
  });

  test('HOST-085: an endpoint not in replay mode is refused before any command is sent', async () => {
    const client = await connectMcpClient({ mcpUrl: rec.sims.belt.mcpUrl });
    const counters = async () =>
      (await callMhs(client, 'mhs__read', { device_id: 'conveyor-workcell', resource: '_counters' })).body;
    try {
      const before = await counters();
      const seqBefore = (await ledgerEntries(rec.dbPath)).length;
      const r = await cli(['replay', 'run', pkg, '--db', rec.dbPath]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('MHS.HOST.REPLAY_REFUSED');
      expect(await counters()).toEqual(before);
      const after = (await ledgerEntries(rec.dbPath)).slice(seqBefore);
      expect(after.filter((e) => e.kind === 'command.intent')).toEqual([]);
      expect(after.find((e) => e.kind === 'error')).toMatchObject({ phase: 'replay_refused', mode: 'live' });
    } finally {
      await client.close();
    }
  });

  test('bad input fails with stable codes', async () => {
    await expect(loadPlan(join(dir, 'nope.json'))).rejects.toMatchObject({ code: 'MHS.HOST.REPLAY_PLAN_INVALID' });
    await expect(loadPlan(pkg, 'tsk_unknown')).rejects.toMatchObject({ code: 'MHS.HOST.REPLAY_PLAN_INVALID' });
    const broken = join(dir, 'broken-pkg');
    cpSync(pkg, broken, { recursive: true });
    const lines = readFileSync(join(broken, 'ledger.jsonl'), 'utf8').split('\n');
    lines[3] = lines[3]!.replace('"kind":"', '"kind":"x');
    writeFileSync(join(broken, 'ledger.jsonl'), lines.join('\n'));
    await expect(loadPlan(broken)).rejects.toMatchObject({ code: 'MHS.EVIDENCE.CHAIN_BROKEN' });
    const bad = await cli(['replay', 'run', join(dir, 'task.json'), '--db', rec.dbPath]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('MHS.HOST.REPLAY_PLAN_INVALID');
  });
});
