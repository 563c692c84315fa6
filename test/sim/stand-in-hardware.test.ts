// Guarantees (HOST-003, 013; issue 22 item 2): no bundled simulator family reports `mode:"hardware"` (nor
// `hybrid`: none is coupled to real hardware) by default; `--stand-in-hardware DEVICE` is the one way to get a hardware-mode test device, and then the manifest
// says in words (device display name and summary, endpoint display name) that it is a simulator
// standing in for hardware, which the host's presentation shows; an unknown device is a config error.
import { readdirSync } from 'node:fs';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, HostError, RealClock } from '../../src/core/index.js';
import { admitManifest } from '../../src/mhs/manifest.js';
import { presentEndpoint, renderEndpointText } from '../../src/mhs/presentation.js';
import type { Manifest } from '../../src/mhs/wire-types.js';
import { BUILTIN_FAMILIES } from '../../src/sim/builtin.js';
import { SimEndpoint } from '../../src/sim/endpoint.js';
import { loadFamily } from '../../src/sim/family.js';
import { callMhs, connectMcpClient, startSimHttp, type SimHttp } from '../helpers/sim.js';

const WORDS = /simulator standing in for hardware/i;

function endpoint(families: readonly string[], standInHardware?: string[]): SimEndpoint {
  return new SimEndpoint({
    families: families.map(loadFamily),
    endpointId: 'mhs://test/stand-in',
    clock: new RealClock(),
    seed: 1,
    operatorTools: false,
    policy: null,
    faults: {},
    transports: [],
    ...(standInHardware ? { standInHardware } : {}),
  });
}

describe('simulators never claim hardware unless told to stand in', () => {
  it('the bundled family list names every bundled device file', () => {
    const files = readdirSync(new URL('../../src/sim/devices/', import.meta.url))
      .filter((f) => f.endsWith('.json'))
      .map((f) => f.slice(0, -'.json'.length));
    expect([...BUILTIN_FAMILIES].sort()).toEqual(files.sort());
  });

  it('HOST-003: no bundled family reports mode hardware by default, and none says it stands in', () => {
    for (const family of BUILTIN_FAMILIES) {
      const m = endpoint([family]).manifest;
      for (const d of m.devices) {
        expect(d.mode, `${family}/${d.device_id}`).not.toBe('hardware');
        expect(`${d.display_name} ${d.summary}`).not.toMatch(WORDS);
      }
    }
  });

  it('HOST-003: no bundled family claims hybrid either: none is coupled to real hardware, so each is simulated', () => {
    // wire contract §3 modes: `hybrid` is part physical; every bundled family is a model and nothing else.
    for (const family of BUILTIN_FAMILIES)
      for (const d of endpoint([family]).manifest.devices) expect(d.mode, `${family}/${d.device_id}`).toBe('simulated');
  });

  it('HOST-003 HOST-013: with the option every bundled device is hardware-mode and says it is a stand-in', () => {
    for (const family of BUILTIN_FAMILIES) {
      const plain = endpoint([family]).manifest;
      const ids = plain.devices.map((d) => d.device_id);
      const m = endpoint([family], ids).manifest;
      expect(m.display_name).toMatch(WORDS);
      for (const d of m.devices) {
        expect(d.mode).toBe('hardware');
        expect(d.display_name).toMatch(WORDS);
        expect(d.summary).toMatch(WORDS);
      }
      // The host admits it and its text presentation carries the words next to `mode: HARDWARE`.
      const text = renderEndpointText(presentEndpoint(admitManifest(m)));
      expect(text).toContain('mode: HARDWARE');
      expect(text).toMatch(WORDS);
    }
  });

  it('an unknown --stand-in-hardware device is a config error', () => {
    let err: unknown;
    try {
      endpoint(['conveyor'], ['laser']);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(HostError);
    expect((err as HostError).code).toBe(ErrorCode.HOST_CONFIG_INVALID);
  });
});

describe('mhs-host sim --stand-in-hardware (a real process)', () => {
  let sims: SimHttp[] = [];
  let clients: Client[] = [];
  beforeAll(async () => {
    sims = await Promise.all([
      startSimHttp('conveyor,laser'),
      startSimHttp('conveyor,laser', ['--stand-in-hardware', 'laser']),
    ]);
    clients = await Promise.all(sims.map((s) => connectMcpClient({ mcpUrl: s.mcpUrl })));
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await Promise.all(sims.map((s) => s.stop()));
  });

  it('the flag turns only the named device into a labelled hardware stand-in', async () => {
    const [plain, standIn] = (await Promise.all(clients.map((c) => callMhs(c, 'mhs__inspect', {})))).map(
      (r) => r.body as unknown as Manifest,
    );
    const mode = (m: Manifest | undefined, id: string) => m?.devices.find((d) => d.device_id === id);
    expect(mode(plain, 'laser')?.mode).not.toBe('hardware');
    expect(mode(standIn, 'laser')).toMatchObject({ mode: 'hardware', display_name: expect.stringMatching(WORDS) });
    expect(mode(standIn, 'conveyor-workcell')?.mode).toBe(mode(plain, 'conveyor-workcell')?.mode);
    expect(standIn?.display_name).toMatch(WORDS);
  });
});
