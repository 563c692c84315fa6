// Issue 14 item 2 (HOST-020: the governed call is the only path to a device): ctx.mcp refuses a server that is an MHS
// endpoint with MHS.HOST.MCP_SERVER_IS_MHS_ENDPOINT. A bundled simulator configured as a ctx.mcp server (HTTP in
// process, stdio as the real `mhs-host sim` child) is refused at connect from its own tool list; the workflow node
// fails with the code, the refusal is reported once, no tools/call is ever sent and the simulator's counters show
// it executed nothing (no e-stop engaged). A resource-only MHS server is refused by `mhs://manifest`; a server that
// grows MHS tools after connect is refused from then on; calls naming MHS tools are refused without sending; an
// ordinary MCP server (the echo fixture) still works through ctx.mcp.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import type { Transport } from '@modelcontextprotocol/client';
import { Server, createMcpHandler } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, HostError, RealClock } from '../../src/core/index.js';
import type { OpenwopHost } from '../../src/openwop/host.js';
import { createMcpFamily } from '../../src/openwop/services/mcp-family.js';
import type { McpFamily } from '../../src/openwop/services/mcp-family.js';
import { assertNotMhsEndpoint } from '../../src/openwop/services/mcp-mhs-guard.js';
import type { RunEvent } from '../../src/openwop/types.js';
import { SimEndpoint } from '../../src/sim/endpoint.js';
import { loadFamily } from '../../src/sim/family.js';
import { listen, serveHttp, toWebRequest, writeWebResponse } from '../../src/sim/http-server.js';
import type { HttpProjection } from '../../src/sim/http-server.js';
import { echoStdioEntry } from '../helpers/mcp-echo.js';
import { simStdioCommand } from '../helpers/sim.js';
import { HOST_DEFAULT_GRACE_MS, HostFixture, tempDbFile } from './service-test-kit.js';

const REFUSED = ErrorCode.HOST_MCP_SERVER_IS_MHS_ENDPOINT;
const DEVICE = 'conveyor-workcell';
const STEP = 'mhs__cap__conveyor-workcell__cap_world_step_v1';

/** Records every request method the host's MCP clients send, per serverId. */
const sent: Array<{ serverId: string; method: string }> = [];
function sniff(serverId: string, t: Transport): Transport {
  const send = t.send.bind(t);
  t.send = (message, opts) => {
    if ('method' in message && 'id' in message) sent.push({ serverId, method: message.method });
    return send(message, opts);
  };
  return t;
}
const methodsTo = (serverId: string) => sent.filter((s) => s.serverId === serverId).map((s) => s.method);

/** A plain MCP server over HTTP whose tool list gains an MHS tool when `grow` is set (a list that changes). */
async function changingServer(): Promise<{ url: string; grow(): void; close(): Promise<void> }> {
  let grown = false;
  const handler = createMcpHandler(() => {
    const s = new Server({ name: 'changing', version: '1.0.0' }, { capabilities: { tools: {} } });
    s.setRequestHandler('tools/list', async () => ({
      tools: [
        { name: 'status', inputSchema: { type: 'object' as const } },
        ...(grown ? [{ name: 'mhs__estop', inputSchema: { type: 'object' as const } }] : []),
      ],
    }));
    s.setRequestHandler('tools/call', async () => ({ content: [{ type: 'text' as const, text: 'ok' }] }));
    return s;
  });
  const server = http.createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      await writeWebResponse(res, await handler.fetch(toWebRequest(req, Buffer.concat(chunks), req.headers.host!)));
    })();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    grow: () => void (grown = true),
    close: async () => {
      await handler.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

let ep: SimEndpoint;
let sim: HttpProjection;
let changing: Awaited<ReturnType<typeof changingServer>>;
let family: McpFamily;
let fx: HostFixture;
let host: OpenwopHost;
const refusals: HostError[] = [];
let evidenceAtStart = 0;

beforeAll(async () => {
  ep = new SimEndpoint({
    families: [loadFamily('conveyor')],
    endpointId: 'mhs://guard-test',
    clock: new RealClock(),
    seed: 1,
    operatorTools: false,
    policy: null,
    faults: {},
    transports: [],
  });
  evidenceAtStart = ep.evidence.size;
  sim = serveHttp(await listen('127.0.0.1', 0), ep);
  changing = await changingServer();
  const stdioSim = simStdioCommand('conveyor');
  family = createMcpFamily({
    config: {
      servers: {
        'sim-http': { transport: 'streamable-http', url: `${sim.url}/mcp` },
        'sim-stdio': { transport: 'stdio', ...stdioSim },
        echo: echoStdioEntry(),
        changing: { transport: 'streamable-http', url: changing.url },
      },
    },
    clock: new RealClock(),
    onRefused: (err) => refusals.push(err),
    _transport: sniff,
  });
  fx = new HostFixture(async () => ({ families: [family] }), tempDbFile('mhs-mcp-guard-'), HOST_DEFAULT_GRACE_MS);
  host = await fx.open();
});

afterAll(async () => {
  await fx?.close();
  await sim?.close();
  await changing?.close();
});

async function run(inputs: Record<string, unknown>) {
  const { run } = await host.runs.createRun({ workflowId: 'conformance-mcp-client', inputs }, { principal: 'test' });
  const status = await host.runs.waitTerminal(run.runId);
  return { status, events: await host.store.events(run.runId) };
}

function failure(events: RunEvent[]): { code?: string; details?: Record<string, unknown> } {
  return (events.find((e) => e.type === 'node.failed')?.payload.error ?? {}) as {
    code?: string;
    details?: Record<string, unknown>;
  };
}

function simExecutedNothing(): void {
  expect(ep.read(DEVICE, '_counters').state).toMatchObject({ total: 0, capability_calls: 0 });
  expect(ep.safety(DEVICE).estop.engaged).toBe(false);
  // No session, command, permit or e-stop left a trace on the endpoint's own evidence chain.
  expect(ep.evidence.size).toBe(evidenceAtStart);
}

describe('ctx.mcp refuses an MHS endpoint at connect (HOST-020, issue 14)', () => {
  it('HTTP simulator: the node fails with the code, only list requests were sent, the sim executed nothing', async () => {
    const r = await run({ method: 'callTool', serverId: 'sim-http', name: 'status', arguments: {} });
    expect(r.status).toBe('failed');
    expect(failure(r.events)).toMatchObject({
      code: REFUSED,
      details: { serverId: 'sim-http', phase: 'connect', detectedBy: 'tools' },
    });
    expect(methodsTo('sim-http')).not.toContain('tools/call');
    expect(methodsTo('sim-http')).toContain('tools/list');
    simExecutedNothing();
    expect(refusals.filter((e) => e.details.serverId === 'sim-http')).toHaveLength(1);
  });

  it('stays refused: a later call (the e-stop of the issue) fails without connecting again', async () => {
    const before = methodsTo('sim-http').length;
    const s = family.surface();
    await expect(s.listTools('sim-http')).rejects.toMatchObject({ code: REFUSED });
    await expect(s.callTool('sim-http', STEP, { steps: 1 })).rejects.toMatchObject({ code: REFUSED });
    expect(methodsTo('sim-http').length).toBe(before);
    expect(await s.serverHealth('sim-http')).toMatchObject({ status: 'incompatible', error: { code: REFUSED } });
    simExecutedNothing();
  });

  it('stdio simulator (`mhs-host sim conveyor --stdio`): refused at connect, no tools/call sent', async () => {
    const r = await run({ method: 'listTools', serverId: 'sim-stdio' });
    expect(r.status).toBe('failed');
    expect(failure(r.events)).toMatchObject({ code: REFUSED, details: { serverId: 'sim-stdio', detectedBy: 'tools' } });
    expect(methodsTo('sim-stdio')).toContain('tools/list');
    expect(methodsTo('sim-stdio')).not.toContain('tools/call');
    expect(refusals.filter((e) => e.details.serverId === 'sim-stdio')).toHaveLength(1);
  });

  it('a server serving only the mhs://manifest resource is refused', async () => {
    const s = new Server({ name: 'manifest-only', version: '1.0.0' }, { capabilities: { resources: {} } });
    s.setRequestHandler('resources/list', async () => ({ resources: [{ uri: 'mhs://manifest', name: 'manifest' }] }));
    const [a, b] = InMemoryTransport.createLinkedPair();
    await s.connect(b);
    const client = new Client({ name: 't', version: '0' });
    await client.connect(a);
    const err = await assertNotMhsEndpoint(client, 'manifest-only', 5000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HostError);
    expect(err).toMatchObject({ code: REFUSED, details: { detectedBy: 'manifest-resource' } });
    await client.close();
  });
});

describe('ordinary servers through ctx.mcp', () => {
  it('the echo fixture still works (callTool completes)', async () => {
    const r = await run({ method: 'callTool', serverId: 'echo', name: 'echo', arguments: { text: 'still here' } });
    expect(r.status).toBe('completed');
    expect(refusals.filter((e) => e.details.serverId === 'echo')).toHaveLength(0);
  });

  it('a call naming an MHS tool or an mhs:// resource is refused locally, nothing sent', async () => {
    const before = methodsTo('echo').length;
    const s = family.surface();
    await expect(s.callTool('echo', 'mhs__estop', { device_id: DEVICE })).rejects.toMatchObject({
      code: REFUSED,
      details: { detectedBy: 'call-name', phase: 'request' },
    });
    await expect(s.readResource('echo', 'mhs://manifest')).rejects.toMatchObject({ code: REFUSED });
    expect(methodsTo('echo').length).toBe(before);
    // The echo server itself is not refused.
    await expect(s.callTool('echo', 'echo', { text: 'ok' })).resolves.toMatchObject({
      structuredContent: { text: 'ok' },
    });
  });

  it('a server whose tool list gains an MHS tool after connect is refused from then on', async () => {
    const s = family.surface();
    await expect(s.callTool('changing', 'status')).resolves.toMatchObject({ content: [{ text: 'ok' }] });
    changing.grow();
    await expect(s.listTools('changing')).rejects.toMatchObject({ code: REFUSED, details: { phase: 'request' } });
    await expect(s.callTool('changing', 'status')).rejects.toMatchObject({ code: REFUSED });
    expect(methodsTo('changing').filter((m) => m === 'tools/call')).toHaveLength(1);
  });
});
