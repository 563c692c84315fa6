// Guarantees: the simulator starts over HTTP and stdio, serves both MCP revisions, and a capability
// call returns a completed receipt whose evidence link verifies (wire contract §2, §4, §6, §9).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { H } from '../../src/core/index.js';
import { callMhs, connectMcpClient, simStdioCommand, startSimHttp, type SimHttp } from '../helpers/sim.js';

describe('sim smoke', () => {
  let sim: SimHttp;
  beforeAll(async () => {
    sim = await startSimHttp('conveyor');
  });
  afterAll(async () => {
    await sim.stop();
  });

  it('serves the descriptor with the manifest digest (§2)', async () => {
    const d = (await (await fetch(`${sim.url}/.well-known/mhs.json`)).json()) as Record<string, unknown>;
    const c = await connectMcpClient({ mcpUrl: sim.mcpUrl });
    const m = (await callMhs(c, 'mhs__inspect')).body;
    const { manifest_digest, ...rest } = m;
    expect(manifest_digest).toBe(H(rest));
    expect(d['manifest_digest']).toBe(manifest_digest);
    expect(d['endpoint_id']).toBe(sim.endpointId);
    await c.close();
  });

  for (const rev of ['legacy', '2026-07-28'] as const) {
    for (const kind of ['http', 'stdio'] as const) {
      it(`steps the conveyor over ${kind} (${rev})`, async () => {
        const c: Client = await connectMcpClient(
          kind === 'http' ? { mcpUrl: sim.mcpUrl } : simStdioCommand('conveyor'),
          rev,
        );
        const r = await callMhs(c, 'mhs__cap__conveyor-workcell__cap_world_step_v1', { ticks: 3 });
        expect(r.isError).toBe(false);
        expect(r.body['status']).toBe('completed');
        expect(JSON.parse(r.text)).toEqual(r.body);
        const v = await callMhs(c, 'mhs__evidence', { action: 'verify' });
        expect(v.body).toEqual({ ok: true });
        await c.close();
      });
    }
  }
});
