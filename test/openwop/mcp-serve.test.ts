// `mhs-host serve --mcp-servers FILE` (RFC 0144 §mcp): a valid file installs the mcp family (discovery advertises
// mcp.supported and conformance-mcp-client, a run over REST reaches the configured real MCP server); an invalid
// file is refused with MHS.HOST.CONFIG_INVALID before anything starts, and a config that parses but violates the
// schema is refused whole (never half-applied).
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, HostError } from '../../src/core/index.js';
import { loadMcpServersConfig, parseMcpServersConfig } from '../../src/openwop/services/mcp-servers-config.js';
import { ROOT, client, makeToken, serve, tempDb } from '../server/serve-helpers.js';
import { startEchoHttp } from '../helpers/mcp-echo.js';
import { cliEntry } from '../helpers/cli-entry.js';
import type { EchoHttp } from '../helpers/mcp-echo.js';

const dir = mkdtempSync(join(tmpdir(), 'mhs-mcp-cfg-'));
function file(name: string, body: string): string {
  const p = join(dir, name);
  writeFileSync(p, body);
  return p;
}

function configError(fn: () => unknown): HostError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(HostError);
    return err as HostError;
  }
  throw new Error('expected MHS.HOST.CONFIG_INVALID');
}

describe('MCP servers config (validated whole)', () => {
  it('accepts stdio and streamable-http servers and a default server', () => {
    const cfg = parseMcpServersConfig({
      servers: {
        a: { transport: 'stdio', command: 'node', args: ['x.js'], env: { K: 'v' } },
        b: { transport: 'streamable-http', url: 'http://127.0.0.1:9/mcp', headers: { authorization: 'Bearer t' } },
      },
      defaultServer: 'b',
      protocol: 'auto',
      minimumRevision: '2025-06-18',
    });
    expect(Object.keys(cfg.servers)).toEqual(['a', 'b']);
  });

  it.each([
    ['no servers', {}],
    ['unknown transport', { servers: { a: { transport: 'ws', url: 'ws://x' } } }],
    ['stdio without command', { servers: { a: { transport: 'stdio' } } }],
    ['http with a command', { servers: { a: { transport: 'streamable-http', url: 'http://x/mcp', command: 'y' } } }],
    ['bad server id', { servers: { 'a b': { transport: 'stdio', command: 'x' } } }],
    ['default names no server', { servers: { a: { transport: 'stdio', command: 'x' } }, defaultServer: 'b' }],
    ['unknown key', { servers: {}, extra: true }],
    ['a floor that is no date', { servers: { a: { transport: 'stdio', command: 'x' } }, minimumRevision: 'soon' }],
    [
      'a floor above the preferred revision',
      { servers: { a: { transport: 'stdio', command: 'x' } }, protocol: 'legacy', minimumRevision: '2026-01-01' },
    ],
  ])('refuses %s with MHS.HOST.CONFIG_INVALID', (_name, value) => {
    const err = configError(() => parseMcpServersConfig(value));
    expect(err.code).toBe(ErrorCode.HOST_CONFIG_INVALID);
    expect((err.details.problems as unknown[]).length).toBeGreaterThan(0);
  });

  it('fills ${NAME} in headers and stdio env from the environment; an unset variable is refused by name only', () => {
    const value = {
      servers: {
        a: { transport: 'stdio', command: 'node', env: { TOKEN: '${A_TOKEN}', PLAIN: 'x' } },
        b: {
          transport: 'streamable-http',
          url: 'http://127.0.0.1:9/mcp',
          headers: { authorization: 'Bearer ${B_TOKEN}' },
        },
      },
    };
    const cfg = parseMcpServersConfig(value, 'cfg', { A_TOKEN: 'secret-a-1', B_TOKEN: 'secret-b-2' });
    expect(cfg.servers.a).toMatchObject({ env: { TOKEN: 'secret-a-1', PLAIN: 'x' } });
    expect(cfg.servers.b).toMatchObject({ headers: { authorization: 'Bearer secret-b-2' } });
    expect(value.servers.b.headers.authorization).toBe('Bearer ${B_TOKEN}');

    const err = configError(() => parseMcpServersConfig(value, 'cfg', { A_TOKEN: 'secret-a-1' }));
    expect(err.code).toBe(ErrorCode.HOST_CONFIG_INVALID);
    expect(err.details.problems).toEqual([
      { path: '/servers/b/headers/authorization', message: 'environment variable B_TOKEN is not set' },
    ]);
    expect(JSON.stringify(err.details)).not.toContain('secret-a-1');
  });

  it('refuses a file that is not JSON', () => {
    expect(configError(() => loadMcpServersConfig(file('broken.json', '{ servers: '))).code).toBe(
      ErrorCode.HOST_CONFIG_INVALID,
    );
  });
});

describe('mhs-host serve --mcp-servers', () => {
  let echo: EchoHttp;
  beforeAll(async () => {
    echo = await startEchoHttp();
  });
  afterAll(async () => {
    await echo?.stop();
  });

  it('refuses an invalid file with MHS.HOST.CONFIG_INVALID and exit code 1', async () => {
    const bad = file('bad.json', JSON.stringify({ servers: { a: { transport: 'stdio' } } }));
    const child = spawn(
      process.execPath,
      [...cliEntry().args, 'serve', '--port', '0', '--db', tempDb(), '--mcp-servers', bad],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    expect(code).toBe(1);
    expect(out).toContain(`error ${ErrorCode.HOST_CONFIG_INVALID}`);
    expect(out).not.toContain('serving');
  });

  it('installs the mcp family: discovery advertises it and a run reaches the MCP server', async () => {
    const cfg = file(
      'ok.json',
      JSON.stringify({ servers: { conformance: { transport: 'streamable-http', url: echo.url } } }),
    );
    const db = tempDb();
    const token = await makeToken(db);
    const srv = await serve(db, ['--no-mhs', '--no-workflows', '--mcp-servers', cfg]);
    try {
      const api = client(srv.url, token);
      const doc = (await api.get('/.well-known/openwop')).body;
      expect(doc.mcp).toEqual({ supported: true });
      expect(doc.fixtures).toContain('conformance-mcp-client');
      // Major 2 advertises the client facet (its ladder and records: test/openwop/v2/mcp-negotiation.test.ts).
      const v2 = (await (
        await fetch(`${srv.url}/.well-known/openwop`, { headers: { 'openwop-version': '2' } })
      ).json()) as {
        mcp?: unknown;
        protocolVersions: string[];
      };
      expect(v2.protocolVersions).toContain('2.0');
      expect(v2.mcp).toMatchObject({ client: true, witness: 'seam-gated' });
      const created = await api.post('/v1/runs', {
        workflowId: 'conformance-mcp-client',
        inputs: { method: 'callTool', name: 'echo', arguments: { text: 'over rest' } },
      });
      expect(created.status).toBeLessThan(300);
      const runId = created.body.runId as string;
      const snap = await api.until(runId, (s) => ['completed', 'failed'].includes(s.status));
      expect(snap.status).toBe('completed');
      const done = (await api.events(runId)).find((e) => e.type === 'node.completed');
      expect((done?.payload.outputs as { result: { structuredContent: unknown } }).result.structuredContent).toEqual({
        text: 'over rest',
      });
    } finally {
      expect(await srv.stop()).toBe(0);
    }
  });
});
