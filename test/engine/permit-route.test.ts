// Guarantees (HOST-047, HOST-061): a call that needs a permit on an endpoint that can never be given one (a stdio
// projection has no operator route) is refused at once with MHS.HOST.ADAPTER_MISSING: no operator is asked for an
// approval that could not be used, nothing is journaled or sent, and the refusal is recorded. Real stdio simulator,
// real SQLite store, the host runtime's policy gate.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, RealClock } from '../../src/core/index.js';
import { openHostRuntime } from '../../src/engine/host-runtime.js';
import type { HostRuntime } from '../../src/engine/host-runtime.js';
import { simStdioCommand } from '../helpers/sim.js';

const dir = mkdtempSync(join(tmpdir(), 'mhs-permit-route-'));
let rt: HostRuntime;

beforeAll(async () => {
  rt = await openHostRuntime({ db: join(dir, 'host.db'), clock: new RealClock() });
  const sim = simStdioCommand('liquid-handler', ['--endpoint-id', 'mhs://test/liquid']);
  await rt.connectors.upsertDiscovered({
    connector_id: 'mhs-liquid-stdio',
    transport: 'stdio',
    command: [sim.command, ...sim.args],
    endpoint_id: null,
    source: { kind: 'registry', ref: 'test' },
    auth: { scheme: 'local' },
  });
  await rt.enablement.enable('mhs-liquid-stdio', { id: 'test-operator' });
  await rt.connectEndpoint('mhs-liquid-stdio', { cwd: sim.cwd });
}, 60_000);

afterAll(async () => {
  await rt?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a permit-required call on a stdio endpoint', () => {
  it('HOST-047 HOST-061: is refused with MHS.HOST.ADAPTER_MISSING before any approval is requested or anything is sent', async () => {
    const call = rt.engine.invoke({
      endpointId: 'mhs://test/liquid',
      deviceId: 'liquid-handler',
      capabilityId: 'cap.liquid.aspirate.v1',
      input: { volume_ul: 10 },
    });
    await expect(call).rejects.toMatchObject({ code: ErrorCode.HOST_ADAPTER_MISSING });
    expect(await rt.services.gate.list()).toEqual([]);
    const entries = await rt.ledger.range(0);
    expect(entries.filter((e) => e.kind === 'approval')).toEqual([]);
    expect(entries.filter((e) => e.kind === 'command.intent')).toEqual([]);
    expect(entries.filter((e) => e.kind === 'error' && e.stage === 'permit.route')).toHaveLength(1);
  });
});
