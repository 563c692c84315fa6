/* eslint-disable @typescript-eslint/no-explicit-any -- tool results are read loosely in assertions */
/**
 * Test helpers for the MCP gateway: the official MCP client over `mhs-host mcp` (stdio, a real child process) or
 * over `serve`'s `/mcp` (Streamable HTTP with a bearer token), on either revision.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { cliEntry, REPO_ROOT } from '../helpers/cli-entry.js';
import type { McpRevision } from '../helpers/sim.js';

function newClient(revision: McpRevision): Client {
  return new Client(
    { name: 'gateway-test', version: '0.0.0' },
    revision === 'legacy'
      ? { versionNegotiation: { mode: 'legacy' } }
      : { versionNegotiation: { mode: { pin: revision } } },
  );
}

/** Spawns `mhs-host mcp --db <db> ...extra` and connects the official client to it. */
export async function gatewayStdio(
  db: string,
  revision: McpRevision,
  extra: string[] = [],
  env: Record<string, string> = {},
): Promise<{ client: Client; stderr: () => string; pid: number | null }> {
  const entry = cliEntry();
  const transport = new StdioClientTransport({
    command: entry.command,
    args: [...entry.args, 'mcp', '--db', db, ...extra],
    cwd: REPO_ROOT,
    env: { ...(process.env as Record<string, string>), MHS_GATEWAY_POLL_MS: '100', ...env },
    stderr: 'pipe',
  });
  let err = '';
  transport.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const client = newClient(revision);
  await client.connect(transport);
  return { client, stderr: () => err, pid: transport.pid };
}

/** Connects the official client to `<url>/mcp` with `token`. */
export async function gatewayHttp(url: string, token: string | undefined, revision: McpRevision): Promise<Client> {
  const client = newClient(revision);
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', url), {
    ...(token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {}),
  });
  await client.connect(transport);
  return client;
}

/** A tool result's structured object, its error flag and its text. */
export interface GatewayResult {
  isError: boolean;
  body: Record<string, any>;
  text: string;
}

/** Calls a gateway tool. */
export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  opts: Parameters<Client['callTool']>[1] = {},
): Promise<GatewayResult> {
  const r = (await client.callTool({ name, arguments: args }, opts)) as {
    isError?: boolean;
    structuredContent?: Record<string, unknown>;
    content?: Array<{ type: string; text?: string }>;
  };
  return {
    isError: r.isError === true,
    body: r.structuredContent ?? {},
    text: (r.content ?? []).map((c) => c.text ?? '').join('\n'),
  };
}
