// RFC 0144 seam: a host service family's surface reaches pack code through ctx, its capability fragment is merged
// into a discovery document that still validates, and a node that requires a family the host lacks fails with
// host_capability_missing instead of running without it.
import { describe, expect, it } from 'vitest';
import type { OpenwopHost } from '../../src/openwop/host.js';
import type { NodeModule } from '../../src/openwop/node-registry.js';
import { openwopSchemas, schemaId } from '../../src/openwop/schemas.js';
import type { ServiceFamily } from '../../src/openwop/service-family.js';
import { HOST_DEFAULT_GRACE_MS, HostFixture, closedAfterEach, oneNode, tempDbFile } from './service-test-kit.js';

const open = closedAfterEach<HostFixture>();

const health: NodeModule = {
  typeId: 'test.mcp-health',
  requires: ['mcp'],
  async execute(ctx) {
    return { outputs: { result: await ctx.mcp!.serverHealth('one') } };
  },
};

function family(closed: string[]): ServiceFamily {
  return {
    name: 'mcp',
    capabilities: () => ({ mcp: { supported: true } }),
    nodes: [health],
    bind: (ctx) => ({
      mcp: {
        serverHealth: async (serverId) => ({ status: 'reachable', checkedAt: `${ctx.runId}/${serverId}` }),
        callTool: () => Promise.reject(new Error('unused')),
        listTools: () => Promise.reject(new Error('unused')),
        readResource: () => Promise.reject(new Error('unused')),
      },
    }),
    close: async () => {
      closed.push('mcp');
    },
  };
}

const wf = oneNode('health-once', { id: 'h', name: 'h', typeId: 'test.mcp-health' });

async function hostWith(opts: { families?: ServiceFamily[]; nodes?: NodeModule[] }): Promise<OpenwopHost> {
  const fx = new HostFixture(async () => opts, tempDbFile('mhs-family-'), HOST_DEFAULT_GRACE_MS);
  const host = await fx.open();
  open.push(fx);
  await host.catalog.register(wf);
  return host;
}

describe('host service families (RFC 0144)', () => {
  it('binds the surface per node, advertises the family and closes it with the host', async () => {
    const closed: string[] = [];
    const host = await hostWith({ families: [family(closed)] });
    const doc = host.capabilities();
    expect(doc.mcp).toEqual({ supported: true });
    expect(openwopSchemas().check(schemaId('capabilities'), doc)).toEqual([]);

    const { run } = await host.runs.createRun({ workflowId: wf.id }, { principal: 't' });
    expect(await host.runs.waitTerminal(run.runId)).toBe('completed');
    const snap = await host.runs.snapshot(run.runId);
    expect(JSON.stringify(snap)).toContain(`${run.runId}/one`);
    await host.close();
    open.splice(0);
    expect(closed).toEqual(['mcp']);
  });

  it('fails a node whose family the host does not install with host_capability_missing', async () => {
    const host = await hostWith({ nodes: [health] });
    expect(host.capabilities().mcp).toBeUndefined();
    const { run } = await host.runs.createRun({ workflowId: wf.id }, { principal: 't' });
    expect(await host.runs.waitTerminal(run.runId)).toBe('failed');
    const snap = (await host.runs.snapshot(run.runId)) as { error?: { code?: string } };
    expect(snap.error?.code).toBe('host_capability_missing');
  });
});
