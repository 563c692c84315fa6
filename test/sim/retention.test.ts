// Guarantees (wire §6, issue 21 item 7): the simulator keeps receipts for receipt_retention_s and no longer: once
// they expire, the next call drops them (and the operation ids of long ones), so its retained set stays bounded by
// the calls of one retention window; receipts still within retention keep answering same-id retries as replayed.
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../src/core/index.js';
import { parseFamily } from '../../src/sim/family.js';
import { SimEndpoint } from '../../src/sim/endpoint.js';
import { LIMITS } from '../../src/sim/sim-options.js';
import { ToolTable } from '../../src/sim/tools.js';
import { STIRRER } from './fixtures.js';

const ctx = { connectionKey: 'unit' };
const TOOL = 'mhs__cap__stirrer__cap_stir_speed_v1';

describe('simulator receipt retention', () => {
  it('expired receipts and their operation ids are dropped; retained ones still replay', async () => {
    const clock = new SimulatedClock();
    const def = structuredClone(STIRRER);
    const ep = new SimEndpoint({
      families: [parseFamily(def, 'unit')],
      endpointId: 'mhs://unit',
      clock,
      seed: 1,
      operatorTools: true,
      policy: null,
      faults: {},
      transports: [],
    });
    const table = new ToolTable(ep);
    const call = async (id: string, extra: Record<string, unknown> = {}) => {
      const p = table.call(TOOL, { rpm: 5, _mhs: { command_id: id, ...extra } }, ctx);
      clock.advance(100);
      return p;
    };
    for (let i = 0; i < 20; i++) await call(`cmd_old_${i}`);
    const long = await call('cmd_old_long', { deadline_ms: 1 });
    expect(long.body['status']).toBe('running');
    clock.advance(1000);
    expect(ep.receipts.size).toBe(21);
    expect(ep.operations.size).toBe(1);

    clock.advance(LIMITS.receipt_retention_s * 1000 - 5_000);
    await call('cmd_mid'); // the old ones are not yet expired here
    clock.advance(LIMITS.receipt_retention_s * 1000 - 1_000);
    const kept = await call('cmd_new');
    expect(kept.body['replayed']).toBe(false);
    // cmd_mid is still within retention: it replays; every old receipt and the operation id are gone.
    expect((await call('cmd_mid')).body['replayed']).toBe(true);
    expect([...ep.receipts.keys()].sort()).toEqual(['cmd_mid', 'cmd_new']);
    expect(ep.operations.size).toBe(0);
    expect((await call('cmd_old_3')).body['replayed']).toBe(false);
  });
});
