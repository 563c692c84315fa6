// Guarantees (wire contract §2): one simulator serves both MCP revisions over both transports: a
// legacy client completes the 2025-11-25 initialize handshake, and a client pinned to 2026-07-28 gets
// a server/discover result; results carry the MHS object as structuredContent and as JCS text.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { jcs } from '../../src/core/index.js';
import { callMhs, connectMcpClient, simStdioCommand, startSimHttp, type SimHttp } from '../helpers/sim.js';

// Child processes start slowly on a loaded machine (2 cores shared with other suites).
vi.setConfig({ hookTimeout: 120_000, testTimeout: 120_000 });

const STEP = 'mhs__cap__conveyor-workcell__cap_world_step_v1';

describe('MCP revisions', () => {
  let sim: SimHttp;
  beforeAll(async () => {
    sim = await startSimHttp('conveyor');
  });
  afterAll(async () => {
    await sim.stop();
  });

  for (const transport of ['http', 'stdio'] as const) {
    it(`legacy client completes initialize over ${transport}`, async () => {
      const c = await connectMcpClient(
        transport === 'http' ? { mcpUrl: sim.mcpUrl } : simStdioCommand('conveyor'),
        'legacy',
      );
      expect(c.getProtocolEra()).toBe('legacy');
      expect(c.getNegotiatedProtocolVersion()).toBe('2025-11-25');
      expect(c.getDiscoverResult()).toBeUndefined();
      const r = await callMhs(c, STEP, { ticks: 3 });
      expect(r.body['status']).toBe('completed');
      expect(r.text).toBe(jcs(r.body));
      await c.close();
    });
  }

  it('a client pinned to 2026-07-28 gets a server/discover result (HTTP; stdio in contract-stdio)', async () => {
    const c = await connectMcpClient({ mcpUrl: sim.mcpUrl }, '2026-07-28');
    expect(c.getProtocolEra()).toBe('modern');
    const d = c.getDiscoverResult() as { supportedVersions?: string[] } | undefined;
    expect(d?.supportedVersions).toContain('2026-07-28');
    expect((await callMhs(c, STEP, { ticks: 1 })).body['status']).toBe('completed');
    await c.close();
  });
});
