// Guarantees: endpoint rules that need time or unusual devices, checked in-process on a simulated
// clock: permit expiry (MHS.AUTH.PERMIT_EXPIRED), max_duration_ms (MHS.LIMIT.DURATION), a
// hardware-only e-stop (MHS.SAFETY.HARDWARE_ESTOP_ONLY with physical_ref), receipt retention
// (a retry after receipt_retention_s executes again), and session TTL capped at max_session_ttl_ms.
import { describe, expect, it } from 'vitest';
import { H, SimulatedClock } from '../../src/core/index.js';
import { parseFamily, type FamilyDefinition } from '../../src/sim/family.js';
import { SimEndpoint } from '../../src/sim/endpoint.js';
import { LIMITS } from '../../src/sim/sim-options.js';
import { ToolTable } from '../../src/sim/tools.js';
import { STIRRER } from './fixtures.js';

const ctx = { connectionKey: 'unit' };
const TOOL = 'mhs__cap__stirrer__cap_stir_speed_v1';

function setup(mutate: (d: FamilyDefinition) => void = () => undefined) {
  const def = structuredClone(STIRRER);
  mutate(def);
  const clock = new SimulatedClock();
  const ep = new SimEndpoint({
    families: [parseFamily(def, 'unit')],
    endpointId: 'mhs://unit',
    clock,
    seed: 1,
    operatorTools: true,
    policy: null,
    faults: {},
    transports: [],
  });
  return { ep, table: new ToolTable(ep), clock };
}

async function run(table: ToolTable, clock: SimulatedClock, name: string, args: Record<string, unknown>) {
  const p = table.call(name, args, ctx);
  clock.advance(100);
  return p;
}

describe('endpoint rules on a simulated clock', () => {
  it('§7: a permit used after its TTL is rejected MHS.AUTH.PERMIT_EXPIRED', async () => {
    const { table, clock } = setup((d) => (d.device.capabilities[0]!.permit.required = true));
    const s = await table.call('mhs__session', { action: 'open', device_id: 'stirrer', ttl_ms: 600_000 }, ctx);
    const sid = s.body['session_id'];
    const p = await table.call(
      'mhs__permit',
      {
        action: 'issue',
        session_id: sid,
        capability_id: 'cap.stir.speed.v1',
        input_digest: H({ rpm: 5 }),
        ttl_ms: 1000,
        approval_ref: 'a',
      },
      ctx,
    );
    clock.advance(1001);
    const r = await run(table, clock, TOOL, { rpm: 5, _mhs: { session_id: sid, permit_id: p.body['permit_id'] } });
    expect(r).toMatchObject({
      isError: false,
      body: { status: 'rejected', error: { mhs_code: 'MHS.AUTH.PERMIT_EXPIRED' } },
    });
  });

  it('§3: a call whose modelled duration exceeds max_duration_ms is rejected MHS.LIMIT.DURATION', async () => {
    const { table, clock } = setup((d) => {
      d.model.capabilities['cap.stir.speed.v1']!.duration = { kind: 'per_unit', input: 'rpm', ms_per_unit: 10 };
    });
    const r = await run(table, clock, TOOL, { rpm: 1000 });
    expect(r).toMatchObject({
      isError: false,
      body: { status: 'rejected', error: { mhs_code: 'MHS.LIMIT.DURATION' } },
    });
    const counters = await table.call('mhs__read', { device_id: 'stirrer', resource: '_counters' }, ctx);
    expect(counters.body['state']).toEqual({ executions: {}, total: 0, capability_calls: 0, composition_calls: 0 });
  });

  it('§7 / HOST-046: a hardware-only e-stop answers MHS.SAFETY.HARDWARE_ESTOP_ONLY with physical_ref', async () => {
    const { table } = setup((d) => (d.device.estop = { kind: 'hardware', physical_ref: 'wall button B2' }));
    const r = await table.call('mhs__estop', { device_id: 'stirrer' }, ctx);
    expect(r).toMatchObject({
      isError: true,
      body: { error: { mhs_code: 'MHS.SAFETY.HARDWARE_ESTOP_ONLY', details: { physical_ref: 'wall button B2' } } },
    });
  });

  it('§6: receipts are retained for receipt_retention_s; a retry after that executes as a new command', async () => {
    const { table, clock } = setup();
    const first = await run(table, clock, TOOL, { rpm: 5, _mhs: { command_id: 'cmd_keep' } });
    const again = await run(table, clock, TOOL, { rpm: 5, _mhs: { command_id: 'cmd_keep' } });
    expect(again.body['replayed']).toBe(true);
    expect(again.body['evidence']).toEqual(first.body['evidence']);
    clock.advance(LIMITS.receipt_retention_s * 1000 + 1);
    const late = await run(table, clock, TOOL, { rpm: 5, _mhs: { command_id: 'cmd_keep' } });
    expect(late.body['replayed']).toBe(false);
  });

  it('overlapping executions on one device both apply (no lost update)', async () => {
    const { table, clock } = setup((d) => (d.model.capabilities['cap.stir.speed.v1']!.updates![0]!.op = 'add'));
    const a = await table.call(TOOL, { rpm: 100, _mhs: { deadline_ms: 1 } }, ctx);
    const b = await table.call(TOOL, { rpm: 50, _mhs: { deadline_ms: 1 } }, ctx);
    expect([a.body['status'], b.body['status']]).toEqual(['running', 'running']);
    clock.advance(100);
    const read = await table.call('mhs__read', { device_id: 'stirrer' }, ctx);
    expect(read.body).toMatchObject({ revision: 2, state: { rpm: 150 } });
    const last = await table.call('mhs__operations', { operation_id: b.body['operation_id'] }, ctx);
    expect(last.body).toMatchObject({ status: 'completed', revisions: { before: 0, after: 2 }, output: { rpm: 150 } });
  });

  it('§5: ttl_ms is capped at limits.max_session_ttl_ms', async () => {
    const { table, clock } = setup();
    const s = await table.call('mhs__session', { action: 'open', device_id: 'stirrer', ttl_ms: 10_000_000 }, ctx);
    expect(Date.parse(s.body['expires_at'] as string) - clock.now()).toBe(LIMITS.max_session_ttl_ms);
  });
});
