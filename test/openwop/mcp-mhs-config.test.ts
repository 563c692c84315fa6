// Issue 14 item 2, configuration side (HOST-020): a `--mcp-servers` entry that names a connector row of the store (its
// MCP url in any spelling, a URL under its base_url, or its stdio argv) is refused whole with
// MHS.HOST.MCP_SERVER_IS_MHS_ENDPOINT: buildServiceFamilies throws and `serve` exits 1 before serving; a row
// discovered after load is refused at connect before anything is spawned or sent. Other servers are untouched.
// End to end through `serve`: an unregistered HTTP simulator in the file is refused at connect, the run fails with
// the code, serve logs the refusal (pino JSON line with the code) and the simulator executed nothing.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Transport } from '@modelcontextprotocol/client';
import { afterAll, describe, expect, it } from 'vitest';
import { buildServiceFamilies } from '../../src/cli/service-families.js';
import { ErrorCode, HostError, RealClock } from '../../src/core/index.js';
import { openDb } from '../../src/ledger/index.js';
import type { ConnectorRow } from '../../src/mhs/connector-row.js';
import { connectorMatches, normaliseEndpointUrl } from '../../src/openwop/services/mcp-connector-match.js';
import type { ConnectorTarget } from '../../src/openwop/services/mcp-connector-match.js';
import { createMcpFamily } from '../../src/openwop/services/mcp-family.js';
import type { McpServersConfig } from '../../src/openwop/services/mcp-servers-config.js';
import { openConnectorStore } from '../../src/policy/connector-store.js';
import { cliEntry } from '../helpers/cli-entry.js';
import { callMhs, connectMcpClient, startSimHttp } from '../helpers/sim.js';
import type { SimHttp } from '../helpers/sim.js';
import { ROOT, client, makeToken, serve, tempDb } from '../server/serve-helpers.js';

const REFUSED = ErrorCode.HOST_MCP_SERVER_IS_MHS_ENDPOINT;
const SIM_ARGV = ['mhs-host', 'sim', 'conveyor', '--stdio'];
const HTTP_ROW: ConnectorTarget = {
  connector_id: 'mhs-localhost-7400',
  url: 'http://127.0.0.1:7400/mcp',
  base_url: 'http://127.0.0.1:7400',
};
const STDIO_ROW: ConnectorTarget = { connector_id: 'mhs-sim-conveyor', command: SIM_ARGV };

const dir = mkdtempSync(join(tmpdir(), 'mhs-mcp-guard-cfg-'));
function file(name: string, cfg: McpServersConfig): string {
  const p = join(dir, name);
  writeFileSync(p, JSON.stringify(cfg));
  return p;
}

async function storeWith(rows: ConnectorTarget[]): Promise<string> {
  const location = tempDb();
  const db = await openDb(location);
  const store = await openConnectorStore(db, { clock: new RealClock() });
  for (const r of rows) {
    const row: Omit<ConnectorRow, 'enabled'> = {
      ...r,
      transport: r.command ? 'stdio' : 'http',
      endpoint_id: null,
      source: { kind: 'file', ref: 'test' },
      auth: r.command ? { scheme: 'local' } : { scheme: 'none' },
    };
    await store.upsertDiscovered(row);
  }
  await db.close();
  return location;
}

describe('servers file entries that name a connector row', () => {
  it('match the url in any spelling, anything under base_url, and the exact stdio argv', () => {
    const cfg: McpServersConfig = {
      servers: {
        a: { transport: 'streamable-http', url: 'HTTP://LOCALHOST:7400/mcp/' },
        b: { transport: 'streamable-http', url: 'http://[::1]:7400/other#x' },
        c: { transport: 'stdio', command: 'mhs-host', args: ['sim', 'conveyor', '--stdio'] },
        d: { transport: 'streamable-http', url: 'http://127.0.0.1:7401/mcp' },
        e: { transport: 'stdio', command: 'mhs-host', args: ['sim', 'thermostat', '--stdio'] },
      },
    };
    expect(connectorMatches(cfg, [HTTP_ROW, STDIO_ROW])).toEqual([
      { serverId: 'a', connector_id: HTTP_ROW.connector_id, match: 'url' },
      { serverId: 'b', connector_id: HTTP_ROW.connector_id, match: 'base_url' },
      { serverId: 'c', connector_id: STDIO_ROW.connector_id, match: 'command' },
    ]);
    expect(normaliseEndpointUrl('https://Example.org/mcp/')).toBe('https://example.org:443/mcp');
  });

  it('buildServiceFamilies refuses the whole file, naming every offending serverId', async () => {
    const location = await storeWith([HTTP_ROW, STDIO_ROW]);
    const mcpServers = file('names-connectors.json', {
      servers: {
        ok: { transport: 'streamable-http', url: 'http://127.0.0.1:7401/mcp' },
        conveyor: { transport: 'stdio', command: 'mhs-host', args: ['sim', 'conveyor', '--stdio'] },
      },
    });
    const db = await openDb(location);
    try {
      const err = await buildServiceFamilies({ mcpServers }, db, new RealClock(), () => undefined).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(HostError);
      expect(err).toMatchObject({
        code: REFUSED,
        details: { source: mcpServers, servers: [{ serverId: 'conveyor', connector_id: STDIO_ROW.connector_id }] },
      });
      expect((err as HostError).retryable).toBe(false);
    } finally {
      await db.close();
    }
  });

  it('a row discovered after load is refused at connect: nothing spawned, nothing sent', async () => {
    const rows: ConnectorTarget[] = [];
    const transports: string[] = [];
    const refused: HostError[] = [];
    const family = createMcpFamily({
      config: { servers: { conveyor: { transport: 'stdio', command: SIM_ARGV[0]!, args: SIM_ARGV.slice(1) } } },
      clock: new RealClock(),
      connectorRows: () => Promise.resolve(rows),
      onRefused: (e) => refused.push(e),
      _transport: (id: string, t: Transport) => (transports.push(id), t),
    });
    rows.push(STDIO_ROW);
    await expect(family.surface().callTool('conveyor', 'anything')).rejects.toMatchObject({
      code: REFUSED,
      details: { detectedBy: 'connector-row', connector_id: STDIO_ROW.connector_id },
    });
    expect(transports).toEqual([]);
    expect(refused).toHaveLength(1);
    await family.close();
  });

  it('serve --mcp-servers naming a connector exits 1 with the code and never serves', async () => {
    const location = await storeWith([HTTP_ROW]);
    const mcpServers = file('names-http-connector.json', {
      servers: { conveyor: { transport: 'streamable-http', url: 'http://localhost:7400/mcp' } },
    });
    const child = spawn(
      process.execPath,
      [...cliEntry().args, 'serve', '--port', '0', '--db', location, '--mcp-servers', mcpServers],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    expect(code).toBe(1);
    expect(out).toContain(`error ${REFUSED}`);
    expect(out).not.toContain('serving');
  });
});

describe('serve with an unregistered simulator in --mcp-servers', () => {
  let sim: SimHttp | undefined;
  afterAll(async () => {
    await sim?.stop();
  });

  it('refuses it at connect: the run fails with the code, serve logs it, the simulator executed nothing', async () => {
    sim = await startSimHttp('conveyor');
    const mcpServers = file('unregistered-sim.json', {
      servers: { conveyor: { transport: 'streamable-http', url: sim.mcpUrl } },
    });
    const db = tempDb();
    const token = await makeToken(db);
    const srv = await serve(db, ['--no-mhs', '--no-workflows', '--mcp-servers', mcpServers]);
    try {
      const api = client(srv.url, token);
      const created = await api.post('/v1/runs', {
        workflowId: 'conformance-mcp-client',
        inputs: { method: 'callTool', serverId: 'conveyor', name: 'status', arguments: {} },
      });
      const snap = await api.until(created.body.runId as string, (x) => ['completed', 'failed'].includes(x.status));
      expect(snap.status).toBe('failed');
      const failed = (await api.events(created.body.runId as string)).find((e) => e.type === 'node.failed');
      expect((failed?.payload.error as { code?: string }).code).toBe(REFUSED);
      const logged = srv
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(logged).toContainEqual(
        expect.objectContaining({ code: REFUSED, details: expect.objectContaining({ serverId: 'conveyor' }) }),
      );
    } finally {
      expect(await srv.stop()).toBe(0);
    }
    const c = await connectMcpClient(sim);
    try {
      const counters = await callMhs(c, 'mhs__read', { device_id: 'conveyor-workcell', resource: '_counters' });
      expect(counters.body.state).toMatchObject({ total: 0, capability_calls: 0 });
    } finally {
      await c.close();
    }
  });
});
