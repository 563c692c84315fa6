// Guarantees (HOST-030, 031, 062): the model-facing tool list generated from every bundled family's manifest
// (one real simulator process serving all four families) has one tool per bound capability named by the wire
// contract, whose input schema is exactly the endpoint projection's schema without `_mhs`, and whose description
// states the effect, risk class, tags, approval needs, mode/fidelity and every unit and range found in the
// schema; only the fixed read tools come with it (no operator tool, no generic tool); a changed manifest digest
// regenerates the tools while an unchanged one is served from the cache; the drift check flags a description or
// schema that no longer matches its binding.
import Ajv2020Module from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { H } from '../../src/core/index.js';
import type { MhsConnection } from '../../src/mhs/connector.js';
import { manifestDigest } from '../../src/mhs/manifest.js';
import { capabilityToolName } from '../../src/mhs/tool-names.js';
import { OPERATOR_TOOLS } from '../../src/mhs/wire-types.js';
import type { CapabilityBinding, Manifest } from '../../src/mhs/wire-types.js';
import { descriptionDrift, modelInputSchema } from '../../src/engine/tool-description.js';
import { MODEL_FIXED_TOOLS, ToolSurfaceBuilder, surfaceDrift } from '../../src/engine/tool-surface.js';
import type { ModelTool } from '../../src/engine/tool-surface.js';
import { connectStdio } from './harness.js';

const Ajv2020 = ((Ajv2020Module as unknown as { default?: unknown }).default ?? Ajv2020Module) as new (
  opts: Record<string, unknown>,
) => { compile(schema: object): unknown };
const FAMILIES = 'thermostat,conveyor,liquid-handler,laser';
let conn: MhsConnection;
let manifest: Manifest;
let projected: Map<string, Record<string, unknown>>;

beforeAll(async () => {
  conn = await connectStdio(FAMILIES, ['--endpoint-id', 'mhs://test/tool-surface'], 'mhs-test-tool-surface');
  manifest = conn.manifest;
  projected = new Map((await conn.listTools()).map((t) => [t.name, t.inputSchema]));
});
afterAll(async () => {
  await conn?.close();
});

const bindings = (m: Manifest) => m.devices.flatMap((d) => d.capabilities.map((b) => ({ device: d, b })));

/** A copy of the manifest with one binding changed and the digest recomputed (a new manifest version). */
function edited(m: Manifest, edit: (b: CapabilityBinding) => void): Manifest {
  const copy = JSON.parse(JSON.stringify(m)) as Manifest;
  edit(copy.devices.find((d) => d.device_id === 'thermostat')!.capabilities[0]!);
  copy.manifest_digest = manifestDigest(copy as unknown as Record<string, unknown>);
  return copy;
}

describe('model-facing tool surface', () => {
  test('HOST-030/031: one tool per bound capability, wire names, schema = projection schema without _mhs', () => {
    const surface = new ToolSurfaceBuilder().build([{ endpointId: manifest.endpoint_id, manifest }]);
    const caps = surface.tools.filter((t) => t.kind === 'capability');
    const all = bindings(manifest);
    expect(all.length).toBeGreaterThanOrEqual(6);
    expect(caps.map((t) => t.name).sort()).toEqual(
      all.map(({ device, b }) => capabilityToolName(device.device_id, b.capability_id)).sort(),
    );
    for (const t of caps) {
      expect(JSON.stringify(t.inputSchema)).not.toContain('_mhs');
      const fromProjection = projected.get(t.name);
      expect(fromProjection, t.name).toBeDefined();
      // The endpoint's own tool schema carries `_mhs`; the model's is the same schema without it.
      expect(JSON.stringify(fromProjection)).toContain('_mhs');
      expect(t.inputSchema).toEqual(modelInputSchema(fromProjection!));
      expect(Object.isFrozen(t) && Object.isFrozen(t.inputSchema)).toBe(true);
    }
  });

  test('HOST-030: descriptions state effect, risk, tags, approval, mode and every unit and range from the data', () => {
    const surface = new ToolSurfaceBuilder().build([{ endpointId: manifest.endpoint_id, manifest }]);
    for (const { device, b } of bindings(manifest)) {
      const t = surface.get(capabilityToolName(device.device_id, b.capability_id))!;
      const d = t.description;
      expect(d).toContain(b.capability_id);
      expect(d).toContain(`Effect: ${b.effect}.`);
      expect(d).toContain(`Risk class: ${b.risk_class}.`);
      for (const tag of b.semantic_tags) expect(d).toContain(tag);
      expect(d).toContain(`Device mode: ${device.mode.toUpperCase()}`);
      if (device.mode !== 'hardware') for (const gap of device.fidelity?.gaps ?? []) expect(d).toContain(gap);
      if (b.permit.required) expect(d).toContain(`${b.permit.approval} approval`);
      else if (b.risk_class === 'R0' || b.risk_class === 'R1') expect(d).toContain('Approval: none required');
      for (const schema of [b.input_schema, b.output_schema]) {
        const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
        for (const [name, p] of Object.entries(props)) {
          expect(d).toContain(` ${name} (`);
          if (typeof p['x-unit'] === 'string') expect(d).toContain(`unit ${p['x-unit']}`);
          if (typeof p.minimum === 'number' && typeof p.maximum === 'number')
            expect(d).toContain(`range ${p.minimum}..${p.maximum}`);
        }
      }
      expect(descriptionDrift(t, manifest, device, b)).toEqual([]);
    }
    // Spot checks against the bundled data: the laser is dual-approval (simulated by default), the thermostat in degC 4..95.
    const laser = surface.tools.find((t) => t.target?.deviceId === 'laser')!;
    expect(laser.description).toContain('dual approval');
    expect(laser.description).toContain('Device mode: SIMULATED');
    const setpoint = surface.get(capabilityToolName('thermostat', 'cap.thermal.setpoint.v1'))!;
    expect(setpoint.description).toContain('Input setpoint_c (number, required, range 4..95, unit degC)');
    // HOST-032: approval needs as machine-readable hints, from the same data.
    expect(laser.annotations).toEqual({ readOnly: false, approvalRequired: true, riskClass: 'R3', destructive: true });
    expect(setpoint.annotations).toEqual({
      readOnly: false,
      approvalRequired: false,
      riskClass: 'R1',
      destructive: true,
    });
    const read = surface.get(capabilityToolName('thermostat', 'cap.thermal.read.v1'))!;
    expect(read.annotations).toMatchObject({ readOnly: true, destructive: false });
    for (const t of surface.tools.filter((x) => x.target?.deviceId === 'liquid-handler'))
      expect(t.annotations.approvalRequired).toBe(true);
  });

  test('HOST-062: with no endpoint attached only the fixed read tools exist, with valid schemas', () => {
    const empty = new ToolSurfaceBuilder().build([]);
    expect(empty.tools.map((t) => t.name)).toEqual([...MODEL_FIXED_TOOLS]);
    const ajv = new Ajv2020({ strict: true });
    for (const t of empty.tools) expect(() => ajv.compile(t.inputSchema as object), t.name).not.toThrow();
    expect(empty.tools.every((t) => t.annotations.readOnly)).toBe(true);
  });

  test('HOST-062: only the fixed read tools come along; no operator tool, no generic control tool', () => {
    const surface = new ToolSurfaceBuilder().build([{ endpointId: manifest.endpoint_id, manifest }]);
    const fixed = surface.tools.filter((t) => t.kind !== 'capability').map((t) => t.name);
    expect(fixed).toEqual([...MODEL_FIXED_TOOLS]);
    for (const op of OPERATOR_TOOLS) expect(surface.get(op)).toBeUndefined();
    for (const t of surface.tools) {
      if (t.kind === 'capability') expect(t.target?.capabilityId).toBeTruthy();
      // No tool takes a free capability id (a generic "control any hardware" tool would).
      expect(Object.keys((t.inputSchema.properties ?? {}) as object)).not.toContain('capability_id');
    }
  });

  test('HOST-030: a changed manifest digest regenerates the tools; the same digest is served from the cache', () => {
    const builder = new ToolSurfaceBuilder();
    const ep = { endpointId: manifest.endpoint_id, manifest };
    const first = builder.build([ep]);
    expect(builder.generations).toBe(1);
    expect(builder.build([ep])).toBe(first);
    expect(builder.build([{ ...ep, manifest: JSON.parse(JSON.stringify(manifest)) as Manifest }])).toBe(first);
    expect(builder.generations).toBe(1);

    const next = edited(manifest, (b) => {
      (b.input_schema.properties as Record<string, Record<string, unknown>>).setpoint_c!.maximum = 60;
    });
    expect(next.manifest_digest).not.toBe(manifest.manifest_digest);
    const second = builder.build([{ ...ep, manifest: next }]);
    expect(builder.generations).toBe(2);
    expect(second.key).not.toBe(first.key);
    const name = capabilityToolName('thermostat', 'cap.thermal.setpoint.v1');
    expect(second.get(name)!.description).toContain('range 4..60');
    expect(second.get(name)!.description).not.toBe(first.get(name)!.description);
    expect(second.get(name)!.target?.manifestDigest).toBe(next.manifest_digest);
    // Back to the first manifest: its tools come from the cache, unchanged.
    expect(builder.build([ep]).get(name)).toBe(first.get(name));
    expect(builder.generations).toBe(2);
  });

  test('HOST-030: the drift check flags a description or schema that no longer matches its binding', () => {
    const surface = new ToolSurfaceBuilder().build([{ endpointId: manifest.endpoint_id, manifest }]);
    const device = manifest.devices.find((d) => d.device_id === 'thermostat')!;
    const binding = device.capabilities.find((c) => c.capability_id === 'cap.thermal.setpoint.v1')!;
    const tool = surface.get(capabilityToolName('thermostat', 'cap.thermal.setpoint.v1'))!;
    expect(descriptionDrift(tool, manifest, device, binding)).toEqual([]);

    const handEdited: ModelTool = { ...tool, description: tool.description.replace('range 4..95', 'range 4..100') };
    expect(descriptionDrift(handEdited, manifest, device, binding).map((i) => i.key)).toContain('input.setpoint_c');
    const riskless: ModelTool = { ...tool, description: tool.description.replace('Risk class: R1.', '') };
    expect(descriptionDrift(riskless, manifest, device, binding).map((i) => i.key)).toContain('risk');

    // The schema changed under an old description: flagged (the old tool against the new manifest).
    const next = edited(manifest, (b) => {
      (b.input_schema.properties as Record<string, Record<string, unknown>>).setpoint_c!.maximum = 60;
    });
    const nextDevice = next.devices.find((d) => d.device_id === 'thermostat')!;
    const keys = descriptionDrift(tool, next, nextDevice, nextDevice.capabilities[0]!).map((i) => i.key);
    expect(keys).toEqual(expect.arrayContaining(['input.setpoint_c', 'input_schema', 'digest']));

    const withControl: ModelTool = {
      ...tool,
      inputSchema: {
        ...tool.inputSchema,
        properties: { ...(tool.inputSchema.properties as object), _mhs: { type: 'object' } },
      },
    };
    expect(descriptionDrift(withControl, manifest, device, binding).map((i) => i.key)).toEqual(['input_schema']);
    expect(H(tool.inputSchema)).toBe(H(modelInputSchema(binding.input_schema)));

    // The whole-surface check: clean as generated; an old surface against the new manifest is flagged per tool.
    const ep = { endpointId: manifest.endpoint_id, manifest };
    expect(surfaceDrift(surface, [ep])).toEqual([]);
    const stale = surfaceDrift(surface, [{ ...ep, manifest: next }]);
    expect(stale.map((d) => d.tool)).toContain(tool.name);
    expect(stale.find((d) => d.tool === tool.name)!.issues.map((i) => i.key)).toContain('manifest_digest');
  });

  test('HOST-030: the same device and capability on two endpoints get distinct tool names', () => {
    const other = JSON.parse(JSON.stringify(manifest)) as Manifest;
    other.endpoint_id = 'mhs://test/tool-surface-2';
    other.manifest_digest = manifestDigest(other as unknown as Record<string, unknown>);
    const surface = new ToolSurfaceBuilder().build([
      { endpointId: manifest.endpoint_id, manifest },
      { endpointId: other.endpoint_id, manifest: other },
    ]);
    const caps = surface.tools.filter((t) => t.kind === 'capability');
    expect(caps).toHaveLength(bindings(manifest).length * 2);
    expect(new Set(caps.map((t) => t.name)).size).toBe(caps.length);
    for (const t of caps) expect(t.name).toMatch(/^mhs__cap__[A-Za-z0-9_-]{1,54}/);
    for (const t of caps) expect(t.name.length).toBeLessThanOrEqual(64);
  });
});
