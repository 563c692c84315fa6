// Guarantees (HOST-020, 021, 022): every device family (thermostat, conveyor, liquid handler, laser) is driven
// through the same engine call with no family knowledge in the host; a fifth family added to the simulator by a
// manifest file only (`--device FILE`) is discovered and driven the same way. Permit-requiring capabilities get
// their permit through the operator route (a separate operator connection), standing in for an approval.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { connect } from '../../src/mhs/connector.js';
import type { CallGate } from '../../src/policy/call-gate.js';
import { ErrorCode } from '../../src/core/index.js';
import { createEngine } from '../../src/engine/index.js';
import type { Engine } from '../../src/engine/index.js';
import { REPO_ROOT, callMhs, connectMcpClient, startSimHttp } from '../helpers/sim.js';
import type { SimHttp } from '../helpers/sim.js';
import { httpRow, openStore, startEngine } from './harness.js';
import type { Store } from './harness.js';

let dir: string;
let sim: SimHttp;
let operator: Client;
let store: Store;
let engine: Engine;

/** Test gate: allows, and for permit-required bindings obtains a permit through the operator connection. */
const operatorApproves: CallGate = {
  async authorize(ctx) {
    if (!ctx.binding.permit.required) return { kind: 'allow' };
    const r = await callMhs(operator, 'mhs__permit', {
      action: 'issue',
      session_id: ctx.session.sessionId,
      capability_id: ctx.binding.capability_id,
      input_digest: ctx.inputDigest,
      ttl_ms: ctx.binding.permit.ttl_ms,
      approval_ref: 'apr_test_operator',
    });
    if (r.isError) return { kind: 'deny', code: 'MHS.HOST.APPROVAL_DENIED', message: r.text };
    return { kind: 'allow', permitId: r.body.permit_id as string };
  },
};

/** A schema-valid input built from the binding's input_schema alone (no family knowledge). */
function sampleInput(schema: Record<string, unknown>): Record<string, unknown> {
  const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const out: Record<string, unknown> = {};
  for (const name of (schema.required ?? []) as string[]) {
    const p = props[name] ?? {};
    if (p.type === 'integer' || p.type === 'number') {
      const min =
        typeof p.minimum === 'number' ? p.minimum : typeof p.exclusiveMinimum === 'number' ? p.exclusiveMinimum + 1 : 1;
      out[name] = p.type === 'integer' ? Math.ceil(min) : min;
    } else if (p.type === 'boolean') out[name] = false;
    else out[name] = 'x';
  }
  return out;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mhs-fifth-'));
  const conveyor = JSON.parse(readFileSync(join(REPO_ROOT, 'src/sim/devices/conveyor.json'), 'utf8'));
  const fifth = structuredClone(conveyor);
  fifth.family = 'sample-carousel';
  fifth.endpoint_display_name = 'Sample carousel (sim)';
  fifth.device.device_id = 'sample-carousel';
  fifth.device.display_name = 'Sample carousel';
  fifth.device.summary = 'Rotating sample carousel; one tick advances it by one slot.';
  fifth.device.capabilities[0].capability_id = 'cap.carousel.advance.v1';
  fifth.device.capabilities[0].summary = 'Advance the carousel by N slots.';
  fifth.model.capabilities = { 'cap.carousel.advance.v1': conveyor.model.capabilities['cap.world.step.v1'] };
  writeFileSync(join(dir, 'carousel.json'), JSON.stringify(fifth));
  sim = await startSimHttp('thermostat,conveyor,liquid-handler,laser', [
    '--device',
    join(dir, 'carousel.json'),
    '--operator-tools',
    '--time-scale',
    '50',
  ]);
  operator = await connectMcpClient({ mcpUrl: sim.mcpUrl });
  store = await openStore();
  engine = await startEngine(store, { gate: operatorApproves, deployment: { enabled: true, allow_hardware: true } });
  await engine.attach(await connect(httpRow(sim.mcpUrl, sim.endpointId)));
});
afterAll(async () => {
  await engine?.stop();
  await operator?.close();
  await sim?.stop();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('one code path for every family', () => {
  test('HOST-020 HOST-021: four families plus a fifth declared by manifest only, through the same call', async () => {
    const ep = engine.endpoint(sim.endpointId)!;
    const devices = ep.deviceProfiles();
    expect(devices.map((d) => d.device_id).sort()).toEqual([
      'conveyor-workcell',
      'laser',
      'liquid-handler',
      'sample-carousel',
      'thermostat',
    ]);
    const seen: Array<[string, string, string]> = [];
    for (const d of devices)
      for (const c of d.capabilities) {
        const res = await engine.invoke({
          endpointId: sim.endpointId,
          deviceId: d.device_id,
          capabilityId: c.capability_id,
          input: sampleInput(c.input_schema),
        });
        expect(res.outcome).toBe('final');
        expect(res.receipt.command_id).toBe(res.commandId);
        await res.recorded;
        const kinds = (await store.ledger.byCommand(res.commandId)).map((e) => e.kind);
        expect(kinds[0]).toBe('command.intent');
        expect(kinds.at(-1)).toBe('receipt');
        seen.push([d.device_id, c.capability_id, res.receipt.status]);
      }
    const byDevice = Object.fromEntries(seen.map(([d, c, s]) => [`${d}/${c}`, s]));
    expect(byDevice['sample-carousel/cap.carousel.advance.v1']).toBe('completed');
    expect(byDevice['laser/cap.laser.pulse.v1']).toBe('completed');
    expect(byDevice['liquid-handler/cap.liquid.aspirate.v1']).toBe('completed');
    expect(byDevice['thermostat/cap.thermal.setpoint.v1']).toBe('completed');
    expect(byDevice['conveyor-workcell/cap.world.step.v1']).toBe('completed');
  });
});

describe('permits', () => {
  test('HOST-070: a single-use permit is never sent twice, not even by a new engine on the same ledger', async () => {
    let cached: string | undefined;
    const cachingGate: CallGate = {
      async authorize(ctx) {
        const d = await operatorApproves.authorize(ctx);
        if (d.kind === 'allow') cached ??= d.permitId;
        return d.kind === 'allow' ? { ...d, ...(cached ? { permitId: cached } : {}) } : d;
      },
    };
    const call = {
      endpointId: sim.endpointId,
      deviceId: 'liquid-handler',
      capabilityId: 'cap.liquid.aspirate.v1',
      input: { volume_ul: 5 },
    };
    const e1 = createEngine({ ledger: store.ledger, gate: cachingGate });
    await e1.start();
    await e1.attach(await connect(httpRow(sim.mcpUrl, sim.endpointId)));
    const first = await e1.invoke(call);
    expect(first.receipt.status).toBe('completed');
    const head = (await store.ledger.head()).seq;
    const again = await e1.invoke(call).catch((e: { code: string }) => e.code);
    expect(again).toBe(ErrorCode.AUTH_PERMIT_CONSUMED);
    await e1.stop();

    const e2 = createEngine({ ledger: store.ledger, gate: cachingGate });
    await e2.start();
    await e2.attach(await connect(httpRow(sim.mcpUrl, sim.endpointId)));
    const afterRestart = await e2.invoke(call).catch((e: { code: string }) => e.code);
    expect(afterRestart).toBe(ErrorCode.AUTH_PERMIT_CONSUMED);
    const intents = (await store.ledger.range(head + 1)).filter((e) => e.kind === 'command.intent');
    expect(intents).toEqual([]);
    await e2.stop();
  });
});

describe('after an e-stop', () => {
  test('HOST-071 HOST-072: refusals come back in full, and the host never resets the device by itself', async () => {
    const stop = await callMhs(operator, 'mhs__estop', { device_id: 'conveyor-workcell' });
    expect(stop.isError).toBe(false);
    const call = {
      endpointId: sim.endpointId,
      deviceId: 'conveyor-workcell',
      capabilityId: 'cap.world.step.v1',
      input: { ticks: 1 },
    };
    for (let i = 0; i < 2; i++) {
      const res = await engine.invoke(call);
      expect(res.outcome).toBe('final');
      expect(res.receipt.status).toBe('rejected');
      expect(res.receipt.error?.mhs_code).toBe(ErrorCode.SAFETY_ESTOP_ACTIVE);
      expect(res.receipt.error?.remediation).toBeTruthy();
      await res.recorded;
    }
    const safety = await callMhs(operator, 'mhs__safety', { device_id: 'conveyor-workcell' });
    expect((safety.body.estop as { engaged: boolean }).engaged).toBe(true);
    const kinds = new Set((await store.ledger.range(0)).map((e) => e.kind));
    expect(kinds.has('reset.request')).toBe(false);
    await callMhs(operator, 'mhs__reset', { device_id: 'conveyor-workcell' });
  });
});
