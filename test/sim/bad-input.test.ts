// Guarantees: bad input to every tool (wrong types, missing fields, unknown device, unknown session,
// out-of-schema values, oversized arguments) returns the documented MHS code with isError as the
// wire contract §4 says, over HTTP and stdio, and the simulator keeps serving afterwards.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { callMhs, connectMcpClient, simStdioCommand, startSimHttp, type SimHttp } from '../helpers/sim.js';

// Child processes start slowly on a loaded machine (2 cores shared with other suites).
vi.setConfig({ hookTimeout: 120_000 });

const FAMILIES = 'thermostat,conveyor,liquid-handler,laser';
const STEP = 'mhs__cap__conveyor-workcell__cap_world_step_v1';
const SETPOINT = 'mhs__cap__thermostat__cap_thermal_setpoint_v1';
const ASPIRATE = 'mhs__cap__liquid-handler__cap_liquid_aspirate_v1';
const PULSE = 'mhs__cap__laser__cap_laser_pulse_v1';
const SCHEMA = 'MHS.SCHEMA.INVALID_INPUT';
const UNKNOWN_SESSION = 'MHS.SESSION.UNKNOWN';
const D64 = '0'.repeat(64);

/** `[tool, arguments, expected code]`; every row is a fault: isError true, nothing executed. */
const CASES: Array<[string, Record<string, unknown>, string]> = [
  ['mhs__devices', { unexpected: 1 }, SCHEMA],
  ['mhs__inspect', { device_id: 5 }, SCHEMA],
  ['mhs__inspect', { device_id: 'no-such-device' }, SCHEMA],
  ['mhs__read', {}, SCHEMA],
  ['mhs__read', { device_id: ['conveyor-workcell'] }, SCHEMA],
  ['mhs__read', { device_id: 'no-such-device' }, SCHEMA],
  ['mhs__read', { device_id: 'conveyor-workcell', resource: 'no-such-resource' }, SCHEMA],
  ['mhs__safety', {}, SCHEMA],
  ['mhs__safety', { device_id: 'no-such-device' }, SCHEMA],
  ['mhs__operations', {}, SCHEMA],
  ['mhs__operations', { command_id: 42 }, SCHEMA],
  ['mhs__operations', { operation_id: 'op_never_issued' }, SCHEMA],
  ['mhs__evidence', {}, SCHEMA],
  ['mhs__evidence', { action: 'delete' }, SCHEMA],
  ['mhs__estop', {}, SCHEMA],
  ['mhs__estop', { device_id: 'no-such-device' }, SCHEMA],
  ['mhs__estop', { device_id: 'conveyor-workcell', _mhs: { session_id: 'ses_never' } }, UNKNOWN_SESSION],
  ['mhs__session', {}, SCHEMA],
  ['mhs__session', { action: 'open' }, SCHEMA],
  ['mhs__session', { action: 'open', device_id: 'no-such-device' }, SCHEMA],
  ['mhs__session', { action: 'open', device_id: 'conveyor-workcell', ttl_ms: 'long' }, SCHEMA],
  ['mhs__session', { action: 'open', device_id: 'conveyor-workcell', capabilities: ['cap.no.such.v1'] }, SCHEMA],
  ['mhs__session', { action: 'open', device_id: 'conveyor-workcell', principal: { kind: 'robot' } }, SCHEMA],
  ['mhs__session', { action: 'heartbeat' }, SCHEMA],
  ['mhs__session', { action: 'heartbeat', session_id: 'ses_never' }, UNKNOWN_SESSION],
  ['mhs__session', { action: 'close', session_id: 'ses_never' }, UNKNOWN_SESSION],
  ['mhs__permit', {}, SCHEMA],
  ['mhs__permit', { action: 'issue', session_id: 'ses_never' }, SCHEMA],
  [
    'mhs__permit',
    {
      action: 'issue',
      session_id: 'ses_never',
      capability_id: 'cap.liquid.aspirate.v1',
      input_digest: D64,
      ttl_ms: 1000,
      approval_ref: 'a',
    },
    UNKNOWN_SESSION,
  ],
  [
    'mhs__permit',
    {
      action: 'issue',
      session_id: 'ses_x',
      capability_id: 'cap.liquid.aspirate.v1',
      input_digest: 'xyz',
      ttl_ms: 1000,
      approval_ref: 'a',
    },
    SCHEMA,
  ],
  ['mhs__permit', { action: 'revoke', permit_id: 'prm_never' }, SCHEMA],
  ['mhs__reset', {}, SCHEMA],
  ['mhs__reset', { device_id: 'no-such-device' }, SCHEMA],
  ['mhs__reset', { device_id: 'laser', interlocks: { no_such_lock: 'open' } }, SCHEMA],
  ['mhs__reset', { device_id: 'laser', interlocks: { enclosure_door: 'ajar' } }, SCHEMA],
  [STEP, {}, SCHEMA],
  [STEP, { ticks: 'three' }, SCHEMA],
  [STEP, { ticks: 0 }, SCHEMA],
  [STEP, { ticks: 1.5 }, SCHEMA],
  [STEP, { ticks: 1, bogus: true }, SCHEMA],
  [STEP, { ticks: 1, _mhs: { deadline_ms: 'soon' } }, SCHEMA],
  [STEP, { ticks: 1, _mhs: { unknown_field: 1 } }, SCHEMA],
  [STEP, { ticks: 1, _mhs: { session_id: 'ses_never' } }, UNKNOWN_SESSION],
  [SETPOINT, { setpoint_c: 'hot' }, SCHEMA],
  [SETPOINT, { setpoint_c: 500 }, SCHEMA],
  [SETPOINT, { setpoint_c: 30, _mhs: { session_id: 'ses_never' } }, UNKNOWN_SESSION],
  [ASPIRATE, {}, SCHEMA],
  [ASPIRATE, { volume_ul: -5 }, SCHEMA],
  [ASPIRATE, { volume_ul: 5, _mhs: { session_id: 'ses_never' } }, UNKNOWN_SESSION],
  [PULSE, { energy_mj: 1 }, SCHEMA],
  [PULSE, { energy_mj: 1, pulses: '2' }, SCHEMA],
  [PULSE, { energy_mj: 1, pulses: 1, _mhs: { session_id: 'ses_never' } }, UNKNOWN_SESSION],
  ['mhs__cap__no-such-device__cap_world_step_v1', { ticks: 1 }, SCHEMA],
  ['mhs__control_anything', { device_id: 'laser' }, SCHEMA],
];

// Started at load so it boots while the stdio block runs first.
const httpSim = startSimHttp(FAMILIES, ['--operator-tools']);
httpSim.catch(() => undefined);
afterAll(async () => {
  await (await httpSim.catch(() => null))?.stop();
});

for (const transport of ['stdio', 'http'] as const) {
  describe(`bad input over ${transport}`, () => {
    let sim: SimHttp | undefined;
    let c: Client;
    beforeAll(async () => {
      sim = transport === 'http' ? await httpSim : undefined;
      c = await connectMcpClient(sim ? { mcpUrl: sim.mcpUrl } : simStdioCommand(FAMILIES, ['--operator-tools']));
    });
    afterAll(async () => {
      await c.close();
      await sim?.stop();
    });

    it.each(CASES)('%s %j -> %s (isError true)', async (tool, args, code) => {
      const r = await callMhs(c, tool, args);
      expect(r.isError).toBe(true);
      expect(r.body['error']).toMatchObject({ mhs_code: code });
    });

    it('a session of one device used on another device is MHS.SESSION.SCOPE', async () => {
      const s = await callMhs(c, 'mhs__session', { action: 'open', device_id: 'conveyor-workcell', ttl_ms: 60_000 });
      const r = await callMhs(c, SETPOINT, { setpoint_c: 25, _mhs: { session_id: s.body['session_id'] } });
      expect(r.isError).toBe(true);
      expect(r.body['error']).toMatchObject({ mhs_code: 'MHS.SESSION.SCOPE' });
    });

    it('oversized arguments (> 4 MiB) to every tool give MHS.LIMIT.FRAME; nothing executed', async () => {
      const pad = 'x'.repeat(4 * 1024 * 1024 + 16);
      for (const t of (await c.listTools()).tools) {
        const r = await callMhs(c, t.name, { device_id: 'conveyor-workcell', pad });
        expect(r.isError, t.name).toBe(true);
        expect(r.body['error'], t.name).toMatchObject({ mhs_code: 'MHS.LIMIT.FRAME' });
      }
      const counters = await callMhs(c, 'mhs__read', { device_id: 'conveyor-workcell', resource: '_counters' });
      expect((counters.body['state'] as Record<string, unknown>)['total']).toBe(0);
    });

    it('keeps serving after all of the above', async () => {
      const r = await callMhs(c, STEP, { ticks: 1 });
      expect(r.isError).toBe(false);
      expect(r.body['status']).toBe('completed');
    });
  });
}
