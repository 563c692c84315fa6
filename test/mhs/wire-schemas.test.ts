// Guarantees: the JSON Schemas of the wire contract accept every object a real simulator returns
// (descriptor, manifest, device profile, capability binding, session, receipt, read result, safety,
// permit, evidence bundle, MhsError) and reject objects that break the contract (missing fields,
// unknown enums, bad digests, fidelity gaps missing on a simulated device, running without an
// operation id); the validators are compiled once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, H, HostError } from '../../src/core/index.js';
import { connect } from '../../src/mhs/connector.js';
import type { MhsConnection } from '../../src/mhs/connector.js';
import { capabilityToolName } from '../../src/mhs/tool-names.js';
import { _compileStats, assertWire, checkWire } from '../../src/mhs/validate.js';
import { WIRE_SCHEMAS } from '../../src/mhs/wire-schemas.js';
import type { WireKind } from '../../src/mhs/wire-schemas.js';
import { startSimHttp } from '../helpers/sim.js';
import type { SimHttp } from '../helpers/sim.js';

describe('wire schemas against real simulator objects', { timeout: 120_000 }, () => {
  let sim: SimHttp;
  let c: MhsConnection;
  const objects: Partial<Record<WireKind, unknown>> = {};

  beforeAll(async () => {
    sim = await startSimHttp('thermostat,liquid-handler', ['--operator-tools', '--time-scale', '1000']);
    c = await connect({
      connector_id: 'mhs-wire',
      transport: 'http',
      url: sim.mcpUrl,
      endpoint_id: sim.endpointId,
      enabled: true,
      source: { kind: 'env', ref: 'MHS_ENDPOINTS' },
      auth: { scheme: 'none' },
    });
    objects.descriptor = await (await fetch(`${sim.url}/.well-known/mhs.json`)).json();
    objects.manifest = c.manifest;
    objects['device-profile'] = c.manifest.devices[0];
    objects['capability-binding'] = c.manifest.devices[0]!.capabilities[0];
    objects.conformance = c.manifest.conformance;
    const session = await c.callTool('mhs__session', {
      action: 'open',
      device_id: 'liquid-handler',
      capabilities: ['cap.liquid.aspirate.v1'],
      ttl_ms: 60_000,
      principal: { kind: 'agent', id: 'host:test' },
      mode: 'live',
    });
    objects.session = session.structuredContent;
    const sessionId = (session.structuredContent as { session_id: string }).session_id;
    const input = { volume_ul: 10 };
    const permit = await c.callTool('mhs__permit', {
      action: 'issue',
      session_id: sessionId,
      capability_id: 'cap.liquid.aspirate.v1',
      input_digest: H(input),
      ttl_ms: 60_000,
      approval_ref: 'apr_test',
    });
    objects.permit = permit.structuredContent;
    const receipt = await c.callTool(capabilityToolName('liquid-handler', 'cap.liquid.aspirate.v1'), {
      ...input,
      _mhs: { session_id: sessionId, permit_id: (permit.structuredContent as { permit_id: string }).permit_id },
    });
    objects.receipt = receipt.structuredContent;
    objects['read-result'] = (await c.callTool('mhs__read', { device_id: 'thermostat' })).structuredContent;
    objects.safety = (await c.callTool('mhs__safety', { device_id: 'thermostat' })).structuredContent;
    objects['evidence-bundle'] = (await c.callTool('mhs__evidence', { action: 'export' })).structuredContent;
    const fault = await c.callTool('mhs__read', { device_id: 'no-such-device' });
    expect(fault.isError).toBe(true);
    objects['mhs-error'] = (fault.structuredContent as { error: unknown }).error;
  });
  afterAll(async () => {
    await c?.close();
    await sim?.stop();
  });

  it('accepts every object kind the simulator returns', () => {
    for (const kind of Object.keys(WIRE_SCHEMAS) as WireKind[]) {
      expect(objects[kind], kind).toBeDefined();
      const r = checkWire(kind, objects[kind]);
      expect(r.ok ? [] : r.issues, kind).toEqual([]);
    }
    expect((objects.receipt as { status: string }).status).toBe('completed');
    expect((objects['mhs-error'] as { mhs_code: string }).mhs_code).toBe(ErrorCode.SCHEMA_INVALID_INPUT);
  });

  it('rejects objects that break the contract', () => {
    const receipt = objects.receipt as Record<string, unknown>;
    const profile = objects['device-profile'] as Record<string, unknown>;
    const cases: Array<[WireKind, unknown]> = [
      ['receipt', { ...receipt, status: 'done' }],
      ['receipt', { ...receipt, status: 'running', operation_id: null }],
      ['receipt', { ...receipt, input_digest: 'XYZ' }],
      ['receipt', (({ evidence: _e, ...r }) => r)(receipt)],
      ['device-profile', { ...profile, mode: 'simulated', fidelity: undefined }],
      ['device-profile', { ...profile, estop: { kind: 'hardware', physical_ref: null } }],
      ['session', { ...(objects.session as object), mode: 'dry-run' }],
      ['safety', { ...(objects.safety as object), notice: 'certified' }],
      ['permit', { ...(objects.permit as object), single_use: false }],
      ['descriptor', { ...(objects.descriptor as object), transports: [] }],
      ['mhs-error', { mhs_code: 'oops', message: 'x', remediation: '' }],
      ['evidence-bundle', { ...(objects['evidence-bundle'] as object), entries: [{ seq: -1 }] }],
    ];
    for (const [kind, value] of cases)
      expect(checkWire(kind, value).ok, `${kind} ${JSON.stringify(value).slice(0, 80)}`).toBe(false);
  });

  it('assertWire throws a HostError with the issues and the source', () => {
    try {
      assertWire('read-result', { device_id: 'x' }, { source: 'test', code: ErrorCode.HOST_MANIFEST_INVALID });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(HostError);
      expect((e as HostError).code).toBe(ErrorCode.HOST_MANIFEST_INVALID);
      expect((e as HostError).details.source).toBe('test');
      expect(((e as HostError).details.issues as unknown[]).length).toBeGreaterThan(0);
    }
  });

  it('compiles each schema once', () => {
    for (let i = 0; i < 3; i++) expect(checkWire('manifest', objects.manifest).ok).toBe(true);
    expect(_compileStats()).toEqual({ builds: 1, validators: Object.keys(WIRE_SCHEMAS).length });
  });
});
