// Guarantees (issue 22 item 1; docs/spec/mhs-wire.md §11): the simulator's experimental mhs.composition.run, checked
// in-process. Without --enable-composition the tool does not exist and nothing runs (counted in _counters). With it:
// a composition whose steps need permits is rejected without a permit for its digest and runs no step; with one
// permit every step runs as `<command_id>.N` with its own receipt and evidence; a step that does not complete
// stops the rest (`not_run`); a same-id retry returns the retained receipt with replayed:true and executes nothing;
// a composition over two devices, or with a bad step input, is a fault before anything runs.
import { describe, expect, it } from 'vitest';
import { ErrorCode, H, RealClock } from '../../src/core/index.js';
import { COMPOSITION_CAPABILITY, COMPOSITION_TOOL } from '../../src/mhs/composition.js';
import { SimEndpoint } from '../../src/sim/endpoint.js';
import { loadFamily } from '../../src/sim/family.js';
import { ToolTable } from '../../src/sim/tools.js';

const ctx = { connectionKey: 'unit' };
const LH = 'liquid-handler';
const aspirate = (v: number) => ({ device_id: LH, capability_id: 'cap.liquid.aspirate.v1', input: { volume_ul: v } });
const dispense = (v: number) => ({ device_id: LH, capability_id: 'cap.liquid.dispense.v1', input: { volume_ul: v } });

function setup(composition: boolean) {
  const ep = new SimEndpoint({
    families: [loadFamily('liquid-handler'), loadFamily('conveyor')],
    endpointId: 'mhs://unit/composition',
    clock: new RealClock(),
    seed: 1,
    operatorTools: true,
    policy: null,
    faults: {},
    timeScale: 1000,
    transports: [],
    composition,
  });
  return { ep, table: new ToolTable(ep) };
}

async function counters(table: ToolTable) {
  const r = await table.call('mhs__read', { device_id: LH, resource: '_counters' }, ctx);
  return r.body['state'] as { total: number; composition_calls: number };
}

async function permitted(table: ToolTable, steps: unknown[]) {
  const s = await table.call('mhs__session', { action: 'open', device_id: LH, ttl_ms: 60_000 }, ctx);
  const sid = s.body['session_id'] as string;
  const p = await table.call(
    'mhs__permit',
    {
      action: 'issue',
      session_id: sid,
      capability_id: COMPOSITION_CAPABILITY,
      input_digest: H({ steps }),
      ttl_ms: 60_000,
      approval_ref: 'unit',
    },
    ctx,
  );
  expect(p.isError, JSON.stringify(p.body)).toBe(false);
  return { session_id: sid, permit_id: p.body['permit_id'] as string };
}

describe('simulator: mhs.composition.run (experimental)', () => {
  it('off by default: no tool, no extension, nothing runs', async () => {
    const { ep, table } = setup(false);
    expect(ep.manifest.extensions).toBeUndefined();
    expect(table.list().map((t) => t.name)).not.toContain(COMPOSITION_TOOL);
    const r = await table.call(COMPOSITION_TOOL, { steps: [aspirate(10)] }, ctx);
    expect(r).toMatchObject({ isError: true, body: { error: { mhs_code: ErrorCode.SCHEMA_INVALID_INPUT } } });
    expect(await counters(table)).toMatchObject({ total: 0, composition_calls: 1 });
  });

  it('without a permit for its digest: rejected, no step runs', async () => {
    const { table } = setup(true);
    const r = await table.call(COMPOSITION_TOOL, { steps: [aspirate(10), dispense(5)] }, ctx);
    expect(r).toMatchObject({
      isError: false,
      body: { status: 'rejected', error: { mhs_code: ErrorCode.AUTH_PERMIT_REQUIRED }, children: [] },
    });
    expect((await counters(table)).total).toBe(0);
  });

  it('one permit: every step runs with its own receipt; a same-id retry executes nothing', async () => {
    const { ep, table } = setup(true);
    const steps = [aspirate(40), dispense(25), dispense(15)];
    const control = { ...(await permitted(table, steps)), command_id: 'cmd_unit_composition' };
    const r = await table.call(COMPOSITION_TOOL, { steps, _mhs: control }, ctx);
    expect(r.isError, JSON.stringify(r.body)).toBe(false);
    const children = r.body['children'] as Array<Record<string, unknown>>;
    expect(r.body).toMatchObject({ status: 'completed', input_digest: H({ steps }), composition_digest: H({ steps }) });
    expect(children.map((c) => [c['command_id'], c['status']])).toEqual([
      ['cmd_unit_composition.1', 'completed'],
      ['cmd_unit_composition.2', 'completed'],
      ['cmd_unit_composition.3', 'completed'],
    ]);
    // Each child and the parent are entries of the endpoint's evidence chain.
    const kinds = ep.evidence.export().entries.filter((e) => e.kind === 'receipt');
    expect(kinds.map((e) => (e.body as { command_id: string }).command_id)).toEqual([
      'cmd_unit_composition.1',
      'cmd_unit_composition.2',
      'cmd_unit_composition.3',
      'cmd_unit_composition',
    ]);
    expect((await counters(table)).total).toBe(3);
    const again = await table.call(COMPOSITION_TOOL, { steps, _mhs: control }, ctx);
    expect(again.body).toMatchObject({ replayed: true, receipt_id: r.body['receipt_id'] });
    expect((await counters(table)).total).toBe(3);
  });

  it('a step that does not complete stops the rest', async () => {
    const { table } = setup(true);
    // The tip holds 200 uL: the second aspirate is refused MHS.LIMIT.RANGE, the dispense never runs.
    const steps = [aspirate(150), aspirate(150), dispense(10)];
    const r = await table.call(COMPOSITION_TOOL, { steps, _mhs: await permitted(table, steps) }, ctx);
    expect(r.body).toMatchObject({
      status: 'rejected',
      error: { mhs_code: ErrorCode.LIMIT_RANGE },
      output: { not_run: 1 },
    });
    expect((r.body['children'] as unknown[]).length).toBe(2);
    expect((await counters(table)).total).toBe(1);
  });

  it('two devices, or a bad step input: a fault before anything runs', async () => {
    const { table } = setup(true);
    const belt = { device_id: 'conveyor-workcell', capability_id: 'cap.world.step.v1', input: { ticks: 1 } };
    const two = await table.call(COMPOSITION_TOOL, { steps: [aspirate(10), belt] }, ctx);
    expect(two).toMatchObject({ isError: true, body: { error: { mhs_code: ErrorCode.SCHEMA_INVALID_INPUT } } });
    const bad = await table.call(COMPOSITION_TOOL, { steps: [aspirate(10), dispense(-1)] }, ctx);
    expect(bad).toMatchObject({ isError: true, body: { error: { mhs_code: ErrorCode.SCHEMA_INVALID_INPUT } } });
    expect((await counters(table)).total).toBe(0);
  });
});
