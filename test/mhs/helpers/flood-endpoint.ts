/**
 * A hostile MHS projection for the frame-limit tests (issue 16): the MCP SDK's own server serves
 * `mhs__inspect` (the sample manifest) and `mhs__devices`, and tool `flood` answers with one JSON-RPC reply
 * whose text content is `bytes` bytes of `x` (or never ends, `endless: true`), streamed from a 1 MiB buffer so
 * this process never holds the reply. The reply is the SDK server's own message for the call with the padding
 * spliced in, so its field order is the SDK's. Run as a script: `--stdio`, or `--http json|sse` (prints
 * `listening <url>` on stderr). One flood at a time per connection.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Writable } from 'node:stream';
import { McpServer, createMcpHandler, fromJsonSchema } from '@modelcontextprotocol/server';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { sampleManifest } from './fake-endpoint.js';

const PLACEHOLDER = '@@FLOOD@@';
const CHUNK = Buffer.alloc(1024 * 1024, 'x');
type Flood = { bytes: number } | { endless: true };

function server(): McpServer {
  const s = new McpServer({ name: 'flood-mhs', version: '1.0.0' });
  const anyArgs = fromJsonSchema({ type: 'object', additionalProperties: true });
  const manifest = sampleManifest();
  const json = (v: unknown) => ({
    content: [{ type: 'text' as const, text: JSON.stringify(v) }],
    structuredContent: v as Record<string, unknown>,
  });
  s.registerTool('mhs__inspect', { inputSchema: anyArgs }, async () => json(manifest));
  s.registerTool('mhs__devices', { inputSchema: anyArgs }, async () => json({ devices: [] }));
  s.registerTool('flood', { inputSchema: anyArgs }, async () => ({ content: [{ type: 'text', text: PLACEHOLDER }] }));
  return s;
}

function floodOf(message: unknown): Flood | null {
  const m = message as { method?: string; params?: { name?: string; arguments?: Record<string, unknown> } };
  if (m.method !== 'tools/call' || m.params?.name !== 'flood') return null;
  const a = m.params.arguments ?? {};
  return a['endless'] === true ? { endless: true } : { bytes: Number(a['bytes'] ?? 0) };
}

/** Writes `head`, the padding, then `tail`, honouring backpressure; stops when `out` is closed. */
async function pour(out: Writable, head: string, flood: Flood, tail: string): Promise<void> {
  const write = (b: Buffer | string) =>
    new Promise<boolean>((resolve) => {
      if (out.destroyed || out.writableEnded) return resolve(false);
      if (out.write(b)) return resolve(true);
      const done = (ok: boolean) => {
        out.off('drain', onDrain);
        out.off('close', onClose);
        resolve(ok);
      };
      const onDrain = () => done(true);
      const onClose = () => done(false);
      out.once('drain', onDrain).once('close', onClose);
    });
  if (!(await write(head))) return;
  const total = 'bytes' in flood ? flood.bytes : Infinity;
  for (let left = total; left > 0; left -= CHUNK.length)
    if (!(await write(left >= CHUNK.length ? CHUNK : CHUNK.subarray(0, left)))) return;
  await write(tail);
}

/** The SDK's reply with the placeholder split out. */
function split(reply: unknown): [string, string] {
  const [head = '', tail = ''] = JSON.stringify(reply).split(PLACEHOLDER);
  return [head, tail];
}

async function serveStdio(): Promise<void> {
  const inner = new StdioServerTransport(process.stdin, process.stdout);
  const floods = new Map<unknown, Flood>();
  let chain = Promise.resolve();
  // Every outbound message goes through one queue, so a flood is never interleaved with another reply.
  const transport: Transport = {
    start: () => inner.start(),
    close: () => inner.close(),
    send: (message: JSONRPCMessage) => {
      const id = (message as { id?: unknown }).id;
      const flood = floods.get(id);
      floods.delete(id);
      chain = chain.then(() => {
        if (!flood) return inner.send(message);
        const [head, tail] = split(message);
        return pour(process.stdout, head, flood, `${tail}\n`);
      });
      return chain;
    },
  };
  inner.onmessage = (m: JSONRPCMessage) => {
    const flood = floodOf(m);
    if (flood) floods.set((m as { id?: unknown }).id, flood);
    transport.onmessage?.(m);
  };
  inner.onclose = () => transport.onclose?.();
  inner.onerror = (e) => transport.onerror?.(e);
  process.stdout.on('error', () => process.exit(0));
  process.stdin.once('end', () => process.exit(0));
  await server().connect(transport);
}

/** Serves on 127.0.0.1 (ephemeral port); a flood reply is `application/json` or one SSE event. */
export async function startFloodHttp(format: 'json' | 'sse'): Promise<{ url: string; close(): Promise<void> }> {
  const handler = createMcpHandler(() => server());
  const srv = http.createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = Buffer.concat(chunks);
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
      const request = new Request(`http://127.0.0.1${req.url ?? '/'}`, {
        method: req.method ?? 'GET',
        headers,
        ...(body.length ? { body } : {}),
      });
      const flood = body.length ? floodOf(JSON.parse(body.toString('utf8'))) : null;
      const response = await handler.fetch(request);
      if (!flood) {
        res.writeHead(response.status, Object.fromEntries(response.headers));
        res.end(Buffer.from(await response.arrayBuffer()));
        return;
      }
      // The handler's own (small) reply, JSON or one SSE event, with the padding spliced in.
      const text = await response.text();
      const data = text.includes('data: ') ? (text.split('data: ')[1] ?? '').split('\n')[0] : text;
      const [head, tail] = split(JSON.parse(data ?? ''));
      const sse = format === 'sse';
      res.writeHead(200, { 'content-type': sse ? 'text/event-stream' : 'application/json' });
      await pour(res, sse ? `event: message\ndata: ${head}` : head, flood, sse ? `${tail}\n\n` : tail);
      res.end();
    })().catch(() => res.destroy());
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const { port } = srv.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: async () => {
      srv.closeAllConnections();
      await new Promise<void>((r) => srv.close(() => r()));
    },
  };
}

if (process.argv.includes('--stdio')) await serveStdio();
