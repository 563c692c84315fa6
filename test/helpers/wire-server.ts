/**
 * A local HTTP server on 127.0.0.1 that stands in for a model provider's API in tests (no network): it records
 * every request (method, path, headers, parsed JSON body) and answers each from a queue of replies, either one
 * JSON body with a status and headers, or a `text/event-stream` body written as the given SSE frames.
 * Imports nothing from vitest: a spawned CLI test uses it from the test process.
 */
import { createServer } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the server received. */
export interface Recorded {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  /** When it arrived (ms since epoch), for retry-after checks. */
  at: number;
}

/** One reply: JSON (default status 200) or SSE frames (each a complete `event:`/`data:` block), after `delayMs`. */
export type WireReply = { status?: number; headers?: Record<string, string>; delayMs?: number } & (
  { json: unknown } | { sse: string[] }
);

/** A running stand-in server. */
export interface WireServer {
  /** `http://127.0.0.1:PORT`. */
  url: string;
  requests: Recorded[];
  /** Appends replies to the queue. */
  reply(...r: WireReply[]): void;
  close(): Promise<void>;
}

/** Starts a server; a request with no queued reply gets 500 `{"error": "no reply queued"}`. */
export async function startWireServer(initial: WireReply[] = []): Promise<WireServer> {
  const queue = [...initial];
  const requests: Recorded[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown = raw;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        /* keep the text */
      }
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, at: Date.now() });
      const r = queue.shift();
      if (!r) {
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'no reply queued' }));
        return;
      }
      if (r.delayMs) {
        const t = setTimeout(() => send(r), r.delayMs);
        res.once('close', () => clearTimeout(t));
      } else send(r);
    });
    const send = (r: WireReply) => {
      if (res.destroyed) return;
      if ('sse' in r) {
        res.writeHead(r.status ?? 200, {
          'content-type': 'text/event-stream',
          'cache-control': 'no-cache',
          ...r.headers,
        });
        for (const frame of r.sse) res.write(frame.endsWith('\n\n') ? frame : `${frame}\n\n`);
        res.end();
        return;
      }
      res.writeHead(r.status ?? 200, { 'content-type': 'application/json', ...r.headers }).end(JSON.stringify(r.json));
    };
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    reply: (...r) => void queue.push(...r),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
