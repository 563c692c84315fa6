// Guarantees: device families are data (issue 2 item 4): the four bundled files validate, a broken
// definition is refused with MHS.HOST.MANIFEST_INVALID, a fifth family loaded with `--device FILE`
// is served with no server change, the conveyor is deterministic under --seed, the thermostat's slow
// approach answers `running` then settles, and session expiry follows the injected clock.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { HostError, SimulatedClock } from '../../src/core/index.js';
import { BUILTIN_FAMILIES, loadFamily, parseFamily, type FamilyDefinition } from '../../src/sim/family.js';
import { SimEndpoint } from '../../src/sim/endpoint.js';
import { ToolTable } from '../../src/sim/tools.js';
import { callMhs, connectMcpClient, startSimHttp, type SimHttp } from '../helpers/sim.js';
import { STIRRER } from './fixtures.js';

// Child processes start slowly on a loaded machine (2 cores shared with other suites).
vi.setConfig({ hookTimeout: 120_000, testTimeout: 120_000 });

const STEP = 'mhs__cap__conveyor-workcell__cap_world_step_v1';
const SETPOINT = 'mhs__cap__thermostat__cap_thermal_setpoint_v1';
const ctx = { connectionKey: 'test' };

function endpoint(families: string[], seed = 42, clock = new SimulatedClock()) {
  const ep = new SimEndpoint({
    families: families.map(loadFamily),
    endpointId: 'mhs://test',
    clock,
    seed,
    operatorTools: true,
    policy: null,
    faults: {},
    transports: [],
  });
  return { ep, table: new ToolTable(ep), clock };
}

describe('device families as data', () => {
  const sims: SimHttp[] = [];
  afterAll(async () => {
    await Promise.all(sims.map((s) => s.stop()));
  });

  it.each(BUILTIN_FAMILIES)('bundled family %s validates', (name) => {
    expect(loadFamily(name).family).toBe(name);
  });

  it.each([
    ['no model for a capability', (d: FamilyDefinition) => (d.model.capabilities = {})],
    [
      'unknown state variable',
      (d: FamilyDefinition) => (d.model.capabilities['cap.stir.speed.v1']!.updates![0]!.var = 'nope'),
    ],
    [
      'both e-stop without physical_ref',
      (d: FamilyDefinition) => (d.device.estop = { kind: 'both', physical_ref: null }),
    ],
    ['bad mode', (d: FamilyDefinition) => ((d.device as { mode: string }).mode = 'imaginary')],
  ])('a definition with %s is MHS.HOST.MANIFEST_INVALID', (_name, mutate) => {
    const def = structuredClone(STIRRER);
    mutate(def);
    let err: unknown;
    try {
      parseFamily(def, 'test');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(HostError);
    expect((err as HostError).code).toBe('MHS.HOST.MANIFEST_INVALID');
  });

  it('a fifth family loaded with --device FILE is served next to a bundled one, no server change', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'mhs-family-')), 'stirrer.json');
    writeFileSync(file, JSON.stringify(STIRRER));
    const sim = await startSimHttp('conveyor', ['--device', file]);
    sims.push(sim);
    const c = await connectMcpClient({ mcpUrl: sim.mcpUrl });
    const devices = (await callMhs(c, 'mhs__devices')).body['devices'] as Array<{ device_id: string }>;
    expect(devices.map((d) => d.device_id)).toEqual(['conveyor-workcell', 'stirrer']);
    const r = await callMhs(c, 'mhs__cap__stirrer__cap_stir_speed_v1', { rpm: 600 });
    expect(r.body).toMatchObject({ status: 'completed', output: { rpm: 600 } });
    await c.close();
  });

  it('the conveyor is deterministic under a seed and differs across seeds', async () => {
    const run = async (seed: number): Promise<unknown[]> => {
      const { table, clock } = endpoint(['conveyor'], seed);
      const out: unknown[] = [];
      for (const ticks of [1, 4, 2]) {
        const p = table.call(STEP, { ticks }, ctx);
        clock.advance(1000);
        out.push((await p).body['output']);
      }
      return out;
    };
    expect(await run(5)).toEqual(await run(5));
    expect(await run(5)).not.toEqual(await run(6));
    const { ep } = endpoint(['conveyor'], 9);
    expect(ep.manifest.devices[0]?.determinism).toEqual({ kind: 'seeded', seed: 9 });
  });

  it('the thermostat approach answers running before the deadline, then settles via mhs__operations', async () => {
    const { table, clock } = endpoint(['thermostat']);
    const r = await table.call(SETPOINT, { setpoint_c: 70, _mhs: { deadline_ms: 2000 } }, ctx);
    expect(r.body).toMatchObject({ status: 'running', operation_id: expect.stringMatching(/^op_/) });
    clock.advance(9_000); // 50 degC at 5 degC/s + 5 ms base = 10 005 ms
    const mid = await table.call('mhs__operations', { operation_id: r.body['operation_id'] }, ctx);
    expect(mid.body['status']).toBe('running');
    clock.advance(1_005);
    const done = await table.call('mhs__operations', { operation_id: r.body['operation_id'] }, ctx);
    expect(done.body).toMatchObject({ status: 'completed', output: { temperature_c: 70, setpoint_c: 70 } });
  });

  it('an e-stop during a running operation fails it (receipt failed, MHS.SAFETY.ESTOP_ACTIVE)', async () => {
    const { table } = endpoint(['thermostat']);
    const r = await table.call(SETPOINT, { setpoint_c: 90, _mhs: { deadline_ms: 100 } }, ctx);
    await table.call('mhs__estop', { device_id: 'thermostat' }, ctx);
    const op = await table.call('mhs__operations', { operation_id: r.body['operation_id'] }, ctx);
    expect(op.body).toMatchObject({ status: 'failed', error: { mhs_code: 'MHS.SAFETY.ESTOP_ACTIVE' } });
  });

  it('sessions expire on the injected clock; heartbeat before expiry keeps them open (§5)', async () => {
    const { table, clock } = endpoint(['conveyor']);
    const s = await table.call('mhs__session', { action: 'open', device_id: 'conveyor-workcell', ttl_ms: 1000 }, ctx);
    const sid = s.body['session_id'];
    clock.advance(900);
    expect((await table.call('mhs__session', { action: 'heartbeat', session_id: sid }, ctx)).isError).toBe(false);
    clock.advance(900);
    expect((await table.call('mhs__session', { action: 'heartbeat', session_id: sid }, ctx)).isError).toBe(false);
    clock.advance(1000);
    const r = await table.call('mhs__session', { action: 'heartbeat', session_id: sid }, ctx);
    expect(r).toMatchObject({ isError: true, body: { error: { mhs_code: 'MHS.SESSION.EXPIRED' } } });
    const ev = (await table.call('mhs__evidence', { action: 'export' }, ctx)).body['entries'] as Array<{
      kind: string;
    }>;
    expect(ev.filter((e) => e.kind === 'session.expired')).toHaveLength(1);
  });

  it('the liquid handler refuses a volume over the tip capacity with MHS.LIMIT.RANGE (µL)', async () => {
    const { table } = endpoint(['liquid-handler']);
    const s = await table.call('mhs__session', { action: 'open', device_id: 'liquid-handler', ttl_ms: 60_000 }, ctx);
    const { H } = await import('../../src/core/index.js');
    const p = await table.call(
      'mhs__permit',
      {
        action: 'issue',
        session_id: s.body['session_id'],
        capability_id: 'cap.liquid.aspirate.v1',
        input_digest: H({ volume_ul: 250 }),
        ttl_ms: 60_000,
        approval_ref: 'apr_x',
      },
      ctx,
    );
    const r = await table.call(
      'mhs__cap__liquid-handler__cap_liquid_aspirate_v1',
      { volume_ul: 250, _mhs: { session_id: s.body['session_id'], permit_id: p.body['permit_id'] } },
      ctx,
    );
    expect(r).toMatchObject({
      isError: false,
      body: { status: 'rejected', error: { mhs_code: 'MHS.LIMIT.RANGE', details: { var: 'tip_volume_ul', max: 200 } } },
    });
  });
});
