/**
 * Test helpers to run the reference MHS simulator (`mhs-host sim`) in a child process and talk to it
 * with the real MCP client. Signatures are stable: other areas' tests depend on them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { REPO_ROOT, simEntry } from './cli-entry.js';

export { REPO_ROOT };

/** A running HTTP simulator. */
export interface SimHttp {
  /** Base URL `http://127.0.0.1:<port>` (descriptor at `${url}/.well-known/mhs.json`). */
  url: string;
  /** MCP endpoint `${url}/mcp`. */
  mcpUrl: string;
  /** Endpoint id, `mhs://localhost:<port>` unless `--endpoint-id` was given. */
  endpointId: string;
  pid: number;
  /** SIGTERM, then SIGKILL after 3 s; resolves when the process has exited. */
  stop(): Promise<void>;
  kill(signal?: NodeJS.Signals): void;
  /** Everything the process wrote to stderr so far. */
  stderr(): string;
  /** Resolves with the exit code when the process ends. */
  exited: Promise<number | null>;
}

// Children still running when the test process exits are killed, so no simulator outlives its test run.
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

function cliArgs(families: string, flags: string[]): string[] {
  return [...simEntry().args, 'sim', families, ...flags];
}

/**
 * Spawns `mhs-host sim <families> ...flags --http 0` ({@link simEntry}) and resolves once it
 * prints `listening <url>`. Rejects (with its stderr) if it exits first or is not ready in 90 s (machines under load start slowly).
 */
export function startSimHttp(families: string, flags: string[] = []): Promise<SimHttp> {
  const child: ChildProcess = spawn(process.execPath, [...cliArgs(families, flags), '--http', '0'], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  live.add(child);
  const exited = new Promise<number | null>((res) =>
    child.once('exit', (code) => {
      live.delete(child);
      res(code);
    }),
  );
  return new Promise<SimHttp>((resolveStart, rejectStart) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      rejectStart(new Error(`sim did not start in 90 s: ${err}`));
    }, 90_000);
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      err += chunk;
      const m = /listening (http:\/\/[^\s]+)/.exec(err);
      if (m && m[1]) {
        clearTimeout(timer);
        const url = m[1];
        const port = new URL(url).port;
        const idFlag = flags.indexOf('--endpoint-id');
        resolveStart({
          url,
          mcpUrl: `${url}/mcp`,
          endpointId: idFlag >= 0 ? (flags[idFlag + 1] as string) : `mhs://localhost:${port}`,
          pid: child.pid as number,
          exited,
          stderr: () => err,
          kill: (signal = 'SIGKILL') => void child.kill(signal),
          stop: async () => {
            if (child.exitCode !== null || child.signalCode !== null) return;
            child.kill('SIGTERM');
            const t = setTimeout(() => child.kill('SIGKILL'), 3000);
            await exited;
            clearTimeout(t);
          },
        });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      rejectStart(new Error(`sim exited (${code}) before listening: ${err}`));
    });
  });
}

/** Command and args that start a stdio simulator (for `StdioClientTransport` or a connector). */
/** A simulator restarted by a test on a fixed port; `kill()` is SIGKILL. */
export interface RestartedSim {
  kill(): void;
  exited: Promise<unknown>;
}

/** Starts an HTTP simulator on a fixed port (e.g. where a killed one listened; {@link startSimHttp} binds an ephemeral one). */
export function simOnPort(families: string, port: number, flags: string[] = []): Promise<RestartedSim> {
  const child = spawn(process.execPath, [...cliArgs(families, flags), '--http', String(port)], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise((r) => child.once('exit', r));
  process.once('exit', () => child.kill('SIGKILL'));
  return new Promise((resolve, reject) => {
    let err = '';
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (c: string) => {
      err += c;
      if (err.includes('listening ')) resolve({ kill: () => void child.kill('SIGKILL'), exited });
    });
    void exited.then(() => reject(new Error(`sim on port ${port} exited: ${err}`)));
  });
}

export function simStdioCommand(
  families: string,
  flags: string[] = [],
): { command: string; args: string[]; cwd: string } {
  return { command: process.execPath, args: [...cliArgs(families, flags), '--stdio'], cwd: REPO_ROOT };
}

/** MCP revision a test client uses: the legacy initialize handshake or pinned 2026-07-28. */
export type McpRevision = 'legacy' | '2026-07-28';

/** Connects the real MCP client over HTTP (`{mcpUrl}`) or stdio (`{command,args}`). */
export async function connectMcpClient(
  target: { mcpUrl: string } | { command: string; args: string[]; cwd?: string },
  revision: McpRevision = '2026-07-28',
): Promise<Client> {
  const client = new Client(
    { name: 'mhs-host-test', version: '0.0.0' },
    revision === 'legacy' ? {} : { versionNegotiation: { mode: { pin: revision } } },
  );
  const transport =
    'mcpUrl' in target
      ? new StreamableHTTPClientTransport(new URL(target.mcpUrl))
      : new StdioClientTransport({
          command: target.command,
          args: target.args,
          cwd: target.cwd ?? REPO_ROOT,
          stderr: 'pipe',
        });
  await client.connect(transport);
  return client;
}

/** An MHS tool result: the object (`structuredContent`) and whether it is a fault. */
export interface MhsResult {
  isError: boolean;
  body: Record<string, unknown>;
  /** The JCS text of `content[0]`. */
  text: string;
}

/** Calls a tool and returns `{isError, body, text}`. */
export async function callMhs(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
  opts: { timeout?: number } = {},
): Promise<MhsResult> {
  const r = (await client.callTool(
    { name, arguments: args },
    opts.timeout ? { timeout: opts.timeout } : undefined,
  )) as {
    isError?: boolean;
    structuredContent?: Record<string, unknown>;
    content?: Array<{ type: string; text?: string }>;
  };
  return { isError: r.isError === true, body: r.structuredContent ?? {}, text: r.content?.[0]?.text ?? '' };
}
