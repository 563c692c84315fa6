// Guarantees: the HOST-090 projection policy (`--config FILE`) and CORE-130 operator tools behave as
// wire contract §4 says: disabled refuses every call (MHS.AUTH.DISABLED); only a JSON true enables;
// allow_hardware:false refuses capability tools, reads, operations and sessions on hardware devices
// (MHS.AUTH.HARDWARE_DISABLED) while discovery, safety, evidence and e-stop stay; estop_devices limits
// the e-stop; mhs__permit / mhs__reset exist only with --operator-tools. (A direct launch without a
// document is enabled: every other sim test runs that way.)
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { loadPolicy } from '../../src/sim/policy.js';
import { callMhs, connectMcpClient, startSimHttp, type MhsResult, type SimHttp } from '../helpers/sim.js';

// Child processes start slowly on a loaded machine (2 cores shared with other suites).
vi.setConfig({ hookTimeout: 120_000 });

const dir = mkdtempSync(join(tmpdir(), 'mhs-sim-policy-'));
function policy(name: string, doc: unknown): string {
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(doc));
  return file;
}

const PULSE = 'mhs__cap__laser__cap_laser_pulse_v1';
const STEP = 'mhs__cap__conveyor-workcell__cap_world_step_v1';
const code = (r: MhsResult): unknown => (r.isError ? (r.body['error'] as Record<string, unknown>)['mhs_code'] : null);

describe('HOST-090 projection policy and CORE-130 operator tools', () => {
  const sims: Record<string, SimHttp> = {};
  const clients: Record<string, Client> = {};
  const CONFIGS: Record<string, string[]> = {
    disabled: ['--config', policy('disabled', { enabled: false, allow_hardware: true })],
    noHardware: ['--config', policy('no-hw', { enabled: true })],
    hardware: ['--config', policy('hw', { enabled: true, allow_hardware: true, estop_devices: ['conveyor-workcell'] })],
  };
  beforeAll(async () => {
    await Promise.all(
      Object.entries(CONFIGS).map(async ([k, flags]) => {
        sims[k] = await startSimHttp('conveyor,laser', ['--stand-in-hardware', 'laser', ...flags]);
        clients[k] = await connectMcpClient({ mcpUrl: (sims[k] as SimHttp).mcpUrl });
      }),
    );
  });
  afterAll(async () => {
    await Promise.all(Object.values(clients).map((c) => c.close()));
    await Promise.all(Object.values(sims).map((s) => s.stop()));
  });

  it('HOST-090: only a JSON true enables a flag; a file defaults both flags to false', () => {
    expect(loadPolicy(policy('strings', { enabled: 'true', allow_hardware: 1 }))).toEqual({
      enabled: false,
      allow_hardware: false,
      estop_devices: null,
    });
    expect(loadPolicy(policy('empty', {}))).toMatchObject({ enabled: false, allow_hardware: false });
    expect(() => loadPolicy(policy('array', [true]))).toThrow(
      expect.objectContaining({ code: 'MHS.HOST.CONFIG_INVALID' }),
    );
  });

  it('HOST-090: a disabled policy refuses every tool call with MHS.AUTH.DISABLED', async () => {
    const c = clients['disabled'] as Client;
    for (const [tool, args] of [
      ['mhs__devices', {}],
      ['mhs__inspect', {}],
      ['mhs__safety', { device_id: 'laser' }],
      ['mhs__evidence', { action: 'verify' }],
      ['mhs__estop', { device_id: 'conveyor-workcell' }],
      ['mhs__session', { action: 'open', device_id: 'conveyor-workcell' }],
      [STEP, { ticks: 1 }],
    ] as const) {
      expect(code(await callMhs(c, tool, args)), tool).toBe('MHS.AUTH.DISABLED');
    }
  });

  it('HOST-090: allow_hardware absent = false: hardware capability, read, session refused; the rest stays', async () => {
    const c = clients['noHardware'] as Client;
    expect(code(await callMhs(c, PULSE, { energy_mj: 1, pulses: 1 }))).toBe('MHS.AUTH.HARDWARE_DISABLED');
    expect(code(await callMhs(c, 'mhs__read', { device_id: 'laser' }))).toBe('MHS.AUTH.HARDWARE_DISABLED');
    expect(code(await callMhs(c, 'mhs__session', { action: 'open', device_id: 'laser' }))).toBe(
      'MHS.AUTH.HARDWARE_DISABLED',
    );
    expect(code(await callMhs(c, 'mhs__inspect', { device_id: 'laser' }))).toBeNull();
    expect(code(await callMhs(c, 'mhs__safety', { device_id: 'laser' }))).toBeNull();
    expect(code(await callMhs(c, 'mhs__evidence', { action: 'export' }))).toBeNull();
    expect(code(await callMhs(c, STEP, { ticks: 1 }))).toBeNull();
    const stop = await callMhs(c, 'mhs__estop', { device_id: 'laser' });
    expect(stop.isError).toBe(false);
    expect(stop.body['status']).toBe('completed');
  });

  it('HOST-090: allow_hardware true opens the hardware device; estop_devices limits the e-stop', async () => {
    const c = clients['hardware'] as Client;
    expect(code(await callMhs(c, 'mhs__read', { device_id: 'laser' }))).toBeNull();
    expect(code(await callMhs(c, 'mhs__estop', { device_id: 'laser' }))).toBe('MHS.AUTH.DISABLED');
    expect(code(await callMhs(c, 'mhs__estop', { device_id: 'conveyor-workcell' }))).toBeNull();
  });

  it('CORE-130: without --operator-tools mhs__permit and mhs__reset are not listed and cannot be called', async () => {
    const c = clients['hardware'] as Client;
    const names = (await c.listTools()).tools.map((t) => t.name);
    expect(names).not.toContain('mhs__permit');
    expect(names).not.toContain('mhs__reset');
    expect(code(await callMhs(c, 'mhs__reset', { device_id: 'laser' }))).toBe('MHS.SCHEMA.INVALID_INPUT');
    expect(code(await callMhs(c, 'mhs__permit', { action: 'revoke', permit_id: 'prm_x' }))).toBe(
      'MHS.SCHEMA.INVALID_INPUT',
    );
  });

  it('a hardware-mode laser needs a dual-approval permit: without one the receipt is rejected', async () => {
    const c = clients['hardware'] as Client;
    const m = (await callMhs(c, 'mhs__inspect', { device_id: 'laser' })).body as {
      estop: { kind: string; physical_ref: string };
      capabilities: Array<{ permit: { approval: string } }>;
    };
    expect(m.estop.kind).toBe('both');
    expect(m.estop.physical_ref).toBeTruthy();
    expect(m.capabilities[0]?.permit.approval).toBe('dual');
    const r = await callMhs(c, PULSE, { energy_mj: 1, pulses: 1 });
    expect(r.isError).toBe(false);
    expect(r.body['error']).toMatchObject({ mhs_code: 'MHS.AUTH.PERMIT_REQUIRED' });
  });
});
