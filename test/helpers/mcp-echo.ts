/**
 * Test helpers for the ctx.mcp tests: the small real MCP server `test/fixtures/mcp-echo-server.ts` as a child
 * process over Streamable HTTP or stdio, and a bare MCP v2 client to compare results against.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { McpServerEntry, McpStdioServer } from '../../src/openwop/services/mcp-servers-config.js';
import { REPO_ROOT, entryArgs } from './cli-entry.js';

const SERVER = 'test/fixtures/mcp-echo-server.ts';

/** An address nothing answers (port 1 on loopback refuses connections). */
export const DOWN_URL = 'http://127.0.0.1:1/mcp';

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

/** A running HTTP echo server. */
export interface EchoHttp {
  url: string;
  stop(): Promise<void>;
}

/** Starts the echo server over Streamable HTTP on an ephemeral port; resolves when it prints its URL. */
export function startEchoHttp(flags: string[] = []): Promise<EchoHttp> {
  const child = spawn(process.execPath, [...entryArgs(SERVER), '--http', '0', ...flags], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  live.add(child);
  const exited = new Promise<void>((r) =>
    child.once('exit', () => {
      live.delete(child);
      r();
    }),
  );
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (c: string) => {
      out += c;
      const m = /listening (\S+)/.exec(out);
      if (m)
        resolve({
          url: m[1]!,
          stop: async () => {
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
            await exited;
          },
        });
    });
    void exited.then(() => reject(new Error(`mcp-echo-server exited before listening: ${out}`)));
  });
}

/** The config entry that starts the echo server over stdio. */
export function echoStdioEntry(flags: string[] = []): McpStdioServer {
  return {
    transport: 'stdio',
    command: process.execPath,
    args: [...entryArgs(SERVER), '--stdio', ...flags],
    cwd: REPO_ROOT,
  };
}

/** A bare MCP v2 client (auto negotiation, like the family) connected to a config entry. */
export async function bareClient(entry: McpServerEntry): Promise<Client> {
  const client = new Client({ name: 'bare-test-client', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(
    entry.transport === 'stdio'
      ? new StdioClientTransport({ command: entry.command, args: entry.args ?? [], cwd: entry.cwd ?? REPO_ROOT })
      : new StreamableHTTPClientTransport(new URL(entry.url)),
  );
  return client;
}
