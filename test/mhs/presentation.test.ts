// Guarantees (HOST-013, 014, 015, 064, 065): the presentation of each of the four simulator families,
// fetched from a real simulator process, matches its manifest field by field: endpoint id, trust and
// conformance level (and "no claim" when the claim is absent), mode, risk class, one-line summary,
// capabilities with physical summaries and units, determinism kind and every fidelity gap for
// simulated/hybrid devices (none for hardware), and the MHS.SAFETY.NOT_CERTIFIED statement; the text
// form carries the same facts inline (no link), and a hardware device is never shown as simulated.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capabilityToolName } from '../../src/mhs/tool-names.js';
import { connect } from '../../src/mhs/connector.js';
import type { MhsConnection } from '../../src/mhs/connector.js';
import { NO_CLAIM, presentEndpoint, renderEndpointText } from '../../src/mhs/presentation.js';
import type { Manifest } from '../../src/mhs/wire-types.js';
import { startSimHttp } from '../helpers/sim.js';
import type { SimHttp } from '../helpers/sim.js';
import { withDigest } from './helpers/fake-endpoint.js';

/** What the family definitions in src/sim/devices declare, restated so the test does not only compare a manifest with itself. */
const EXPECTED = {
  'conveyor-workcell': {
    mode: 'simulated',
    risk: 'R1',
    determinism: 'seeded',
    units: { 'cap.world.step.v1': { ticks: 'tick' } },
  },
  laser: {
    mode: 'hardware',
    risk: 'R3',
    determinism: undefined,
    units: { 'cap.laser.pulse.v1': { energy_mj: 'mJ', pulses: 'pulse' } },
  },
  'liquid-handler': {
    mode: 'simulated',
    risk: 'R2',
    determinism: 'deterministic',
    units: { 'cap.liquid.aspirate.v1': { volume_ul: 'uL' }, 'cap.liquid.dispense.v1': { volume_ul: 'uL' } },
  },
  thermostat: {
    mode: 'simulated',
    risk: 'R1',
    determinism: 'deterministic',
    units: { 'cap.thermal.setpoint.v1': { setpoint_c: 'degC' } },
  },
} as const;

describe('presentation of the four simulator families', { timeout: 120_000 }, () => {
  let sim: SimHttp;
  let conn: MhsConnection;
  let manifest: Manifest;
  beforeAll(async () => {
    sim = await startSimHttp('conveyor,laser,liquid-handler,thermostat', ['--stand-in-hardware', 'laser']);
    conn = await connect({
      connector_id: 'mhs-all',
      transport: 'http',
      url: sim.mcpUrl,
      endpoint_id: sim.endpointId,
      enabled: true,
      source: { kind: 'env', ref: 'MHS_ENDPOINTS' },
      auth: { scheme: 'none' },
    });
    manifest = conn.manifest;
  });
  afterAll(async () => {
    await conn?.close();
    await sim?.stop();
  });

  it('renders endpoint id, trust, claim and the safety statement', () => {
    const p = presentEndpoint(manifest, { source: 'env:MHS_ENDPOINTS', sourceTrust: 'operator-configured' });
    expect(p.endpoint_id).toBe(sim.endpointId);
    expect(p.trust).toBe(manifest.conformance!.trust);
    expect(p.conformance_level).toBe(manifest.conformance!.level);
    expect(p.safety_notice).toBe('MHS.SAFETY.NOT_CERTIFIED');
    expect(p.safety_statement).toMatch(/^MHS\.SAFETY\.NOT_CERTIFIED/);
    expect(p.manifest_digest).toBe(manifest.manifest_digest);
    expect(p.source_trust).toBe('operator-configured');
    expect(p.devices.map((d) => d.device_id).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  for (const [deviceId, want] of Object.entries(EXPECTED))
    it(`HOST-013/065: ${deviceId} field by field`, () => {
      const profile = manifest.devices.find((d) => d.device_id === deviceId)!;
      const d = presentEndpoint(manifest).devices.find((x) => x.device_id === deviceId)!;
      expect(d.mode).toBe(want.mode);
      expect(d.mode).toBe(profile.mode);
      expect(d.risk_class).toBe(want.risk);
      expect(d.risk_class).toBe(profile.risk_class);
      expect(d.instance_id).toBe(profile.instance_id);
      expect(d.display_name).toBe(profile.display_name);
      expect(d.summary).toBe(profile.summary.replace(/\s+/g, ' ').trim());
      expect(d.summary).not.toContain('\n');
      expect(d.estop).toBe(profile.estop.kind);
      if (profile.mode === 'hardware') {
        expect(d.determinism_kind).toBeUndefined();
        expect(d.fidelity_gaps).toBeUndefined();
      } else {
        expect(d.determinism_kind).toBe(want.determinism);
        expect(d.determinism_kind).toBe(profile.determinism.kind);
        expect(d.fidelity_gaps).toEqual(profile.fidelity!.gaps);
        expect(d.fidelity_gaps!.length).toBeGreaterThan(0);
      }
      expect(d.capabilities.map((c) => c.capability_id)).toEqual(profile.capabilities.map((c) => c.capability_id));
      for (const c of profile.capabilities) {
        const pc = d.capabilities.find((x) => x.capability_id === c.capability_id)!;
        expect(pc.summary).toBe(c.summary);
        expect(pc.tool_name).toBe(capabilityToolName(deviceId, c.capability_id));
        expect(pc.effect).toBe(c.effect);
        expect(pc.risk_class).toBe(c.risk_class);
        expect(pc.semantic_tags).toEqual(c.semantic_tags);
        expect(pc.permit_required).toBe(c.permit.required);
        expect(pc.approval).toBe(c.permit.approval);
        const props = (c.input_schema.properties ?? {}) as Record<string, Record<string, unknown>>;
        expect(pc.inputs.map((f) => f.name)).toEqual(Object.keys(props).filter((k) => k !== '_mhs'));
        for (const f of pc.inputs) expect(f.unit).toBe((props[f.name]!['x-unit'] as string | undefined) ?? null);
      }
      const units = want.units as Record<string, Record<string, string>>;
      for (const [capId, byField] of Object.entries(units)) {
        const pc = d.capabilities.find((x) => x.capability_id === capId)!;
        for (const [field, unit] of Object.entries(byField))
          expect(pc.inputs.find((f) => f.name === field)?.unit).toBe(unit);
      }
    });

  it('HOST-014: an absent claim is shown as "no claim", never as a pass', () => {
    const { conformance: _c, ...rest } = manifest;
    const unclaimed = withDigest({ ...rest, conformance: null });
    const p = presentEndpoint(unclaimed);
    expect(p.trust).toBe(NO_CLAIM);
    expect(p.conformance_level).toBe(NO_CLAIM);
    const text = renderEndpointText(p);
    expect(text).toContain('conformance: no claim');
    expect(text).not.toMatch(/CL[1-5]/);
  });

  it('HOST-015/064: the text form carries every gap, mode, risk and unit inline', () => {
    const text = renderEndpointText(presentEndpoint(manifest));
    expect(text).toContain(`Endpoint ${sim.endpointId}`);
    expect(text).toContain('MHS.SAFETY.NOT_CERTIFIED');
    for (const d of manifest.devices) {
      expect(text).toContain(`Device ${d.device_id}`);
      expect(text).toContain(`mode: ${d.mode.toUpperCase()}; risk class: ${d.risk_class}`);
      for (const g of d.fidelity?.gaps ?? []) expect(text).toContain(g);
      for (const c of d.capabilities) expect(text).toContain(c.summary);
    }
    expect(text).toContain('[degC]');
    expect(text).toContain('[uL]');
    expect(text).toContain('[mJ]');
    expect(text).not.toMatch(/https?:\/\//);
    const laserBlock = text.slice(text.indexOf('Device laser'), text.indexOf('Device liquid-handler'));
    expect(laserBlock).toContain('mode: HARDWARE');
    expect(laserBlock).not.toContain('SIMULATED');
    expect(laserBlock).not.toContain('fidelity gaps');
  });
});
