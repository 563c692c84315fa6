// Guarantees (issue 14; HOST-012, HOST-030, HOST-068): the gateway in process, over the SDK's in-memory transport
// pair, against a real simulator process and a real SQLite store. When the endpoint comes back with another
// manifest (same endpoint id, more devices), the gateway's list changes, `notifications/tools/list_changed` is
// sent, and the new device's tools are listed, generated from the new manifest; the old digest's tools are gone.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { RealClock, createIdFactory } from '../../src/core/index.js';
import { openHostRuntime } from '../../src/engine/host-runtime.js';
import type { HostRuntime } from '../../src/engine/host-runtime.js';
import { createGateway } from '../../src/gateway/index.js';
import type { Gateway } from '../../src/gateway/index.js';
import { gatewayServerFactory } from '../../src/gateway/gateway-server.js';
import { capabilityToolName } from '../../src/mhs/tool-names.js';
import { startMhsHost } from '../helpers/mhs-host.js';
import type { MhsHost } from '../helpers/mhs-host.js';
import { simOnPort } from '../helpers/sim.js';
import type { RestartedSim } from '../helpers/sim.js';

const STEP = capabilityToolName('conveyor-workcell', 'cap.world.step.v1');
const ASPIRATE = capabilityToolName('liquid-handler', 'cap.liquid.aspirate.v1');

let host: MhsHost<'belt'>;
let rt: HostRuntime;
let gw: Gateway;
let client: Client;
let again: RestartedSim | undefined;

beforeAll(async () => {
  host = await startMhsHost({ prefix: 'gwm', sims: { belt: ['conveyor'] }, serve: false });
  const clock = new RealClock();
  rt = await openHostRuntime({
    db: host.dbPath,
    clock,
    attachEnabled: true,
    engine: { reconnect: { initialMs: 50, maxMs: 200 }, probeIntervalMs: 200 },
  });
  gw = createGateway({ runtime: rt, pollMs: 100 });
  const server = await gatewayServerFactory(
    gw,
    () => ({
      principal: { kind: 'agent', id: 'in-process' },
      sessionId: createIdFactory(clock).next('run'),
    }),
    { pushListChanged: true },
  )({ era: 'legacy' });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  client = new Client({ name: 'gateway-test', version: '0.0.0' });
  await client.connect(b);
}, 120_000);

afterAll(async () => {
  await client?.close();
  await gw?.close();
  await rt?.close();
  again?.kill();
  await host?.stop();
});

describe('a changed manifest digest', () => {
  test('HOST-030, HOST-012: the list changes with list_changed and the new tools come from the new manifest', async () => {
    let changed = 0;
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      changed += 1;
    });
    const before = (await client.listTools()).tools.map((t) => t.name);
    expect(before).toContain(STEP);
    expect(before).not.toContain(ASPIRATE);
    const oldDigest = rt.engine.endpoint(host.sims.belt.endpointId)!.manifest.manifest_digest;

    // The same endpoint (same port, so the same endpoint id) comes back serving one more device.
    const port = Number(new URL(host.sims.belt.url).port);
    await host.sims.belt.stop();
    again = await simOnPort('conveyor,liquid-handler', port);
    await expect
      .poll(() => rt.engine.endpoint(host.sims.belt.endpointId)?.manifest.manifest_digest, { timeout: 20_000 })
      .not.toBe(oldDigest);
    await expect.poll(() => changed, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    const after = (await client.listTools()).tools;
    expect(after.map((t) => t.name)).toEqual(expect.arrayContaining([STEP, ASPIRATE]));
    const meta = after.find((t) => t.name === STEP)!._meta?.['io.mhs-host/tool'] as { manifest_digest: string };
    expect(meta.manifest_digest).toBe(rt.engine.endpoint(host.sims.belt.endpointId)!.manifest.manifest_digest);
  });
});
