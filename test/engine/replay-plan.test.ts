// Guarantees (HOST-057): the replay plan derived from a real store (engine over simulator processes, SQLite
// ledger, collected endpoint evidence) keeps ad-hoc commands as their own entries (task_id null) in ledger order,
// lists a command without a final receipt (reply dropped: outcome unknown) as not replayable instead of guessing,
// flags an input the ledger holds redacted (HOST-056) as not replayable as sent, links each expected receipt to
// the endpoint evidence, and says what the record cannot hold (no per-command seed on the wire).
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { H, RealClock } from '../../src/core/index.js';
import { planCommands, planFromStore, planProblems, sealPlan } from '../../src/engine/index.js';
import type { Engine, ReplayPlan } from '../../src/engine/index.js';
import { openArtifacts } from '../../src/ledger/artifacts.js';
import { REDACTED } from '../../src/ledger/index.js';
import { connectStdio, openStore, startEngine } from './harness.js';
import type { Store } from './harness.js';

vi.setConfig({ hookTimeout: 120_000, testTimeout: 60_000 });

const THERMO = 'mhs://test/plan-thermo';
const BELT = 'mhs://test/plan-belt';
let store: Store;
let engine: Engine;
let plan: ReplayPlan;
let dropped: string;

beforeAll(async () => {
  store = await openStore();
  const artifacts = await openArtifacts(store.db, { clock: new RealClock() });
  engine = await startEngine(store, { artifacts, transportMarginMs: 300, reconcileOnAttach: false });
  for (const c of await Promise.all([
    connectStdio('thermostat', ['--endpoint-id', THERMO, '--time-scale', '20'], 'mhs-plan-thermo'),
    connectStdio('conveyor', ['--endpoint-id', BELT, '--drop-reply', '1'], 'mhs-plan-belt'),
  ]))
    await engine.attach(c);
  const call = (endpointId: string, deviceId: string, capabilityId: string, input: Record<string, unknown>) =>
    engine.invoke({ endpointId, deviceId, capabilityId, input, deadlineMs: 300 });
  await call(THERMO, 'thermostat', 'cap.thermal.read.v1', {});
  await call(THERMO, 'thermostat', 'cap.thermal.setpoint.v1', { setpoint_c: 25, operator_note: 'call Bob' });
  dropped = await call(BELT, 'conveyor-workcell', 'cap.world.step.v1', { ticks: 2 }).then(
    () => '',
    (e: { details: { command_id: string } }) => e.details.command_id,
  );
  await engine.collectEvidence();
  plan = await planFromStore(store.db, new RealClock(), store.path);
});
afterAll(async () => {
  await engine?.stop();
  await store?.close();
});

describe('replay plan from a store (HOST-057)', () => {
  test('HOST-057: ad-hoc commands in order; a command without a final receipt is not replayable', () => {
    expect(dropped).toMatch(/^cmd_/);
    expect(plan.source).toMatchObject({ kind: 'ledger', ref: store.path });
    expect(plan.tasks.map((t) => t.task_id)).toEqual([null, null]);
    const cmds = planCommands(plan);
    expect(cmds.map((c) => c.capability_id)).toEqual(['cap.thermal.read.v1', 'cap.thermal.setpoint.v1']);
    expect(plan.not_replayable).toEqual([
      expect.objectContaining({ command_id: dropped, endpoint_id: BELT, reason: 'no_final_receipt' }),
    ]);
    for (const c of cmds) expect(c.evidence_in_bundle).toBe(true);
    expect(plan.endpoints.map((e) => e.endpoint_id)).toEqual([THERMO]);
    expect(plan.endpoints[0]?.evidence).not.toBeNull();
  });

  test('HOST-057: a redacted input is flagged, keeps its recorded digest, and is named in missing', () => {
    const c = planCommands(plan)[1]!;
    expect(c.input).toEqual({ setpoint_c: 25, operator_note: REDACTED });
    expect(c.input_redacted).toBe(true);
    expect(c.input_digest).toBe(H({ setpoint_c: 25, operator_note: 'call Bob' }));
    expect(plan.missing.some((m) => m.includes('redacted') && m.includes(c.command_id))).toBe(true);
    expect(plan.missing.some((m) => m.includes('per-command seeds'))).toBe(true);
    // The plan checks: redacted inputs are exempt from the H(input) check, the digest recomputes.
    expect(planProblems(plan)).toEqual([]);
    expect(planProblems({ ...plan, missing: [] })).toEqual(['plan_digest does not recompute (the plan was edited)']);
    expect(planProblems(sealPlan({ ...plan, missing: [] }))).toEqual([]);
  });
});
