/**
 * A forwarding HTTP proxy in front of a simulator that counts TCP connections and records each
 * request's Authorization header, so tests check (not assume) what the host opened and sent.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';

export interface HttpProbe {
  /** Base URL of the proxy. */
  url: string;
  connections(): number;
  /** Authorization header of every request, in order ('' when absent). */
  authorizations(): string[];
  close(): Promise<void>;
}

/** Starts a probe forwarding to `target` (an origin such as `http://127.0.0.1:1234`). */
export async function startHttpProbe(target: string): Promise<HttpProbe> {
  let connections = 0;
  const auth: string[] = [];
  const server = createServer((req, res) => {
    auth.push(req.headers.authorization ?? '');
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers))
        if (typeof v === 'string' && k !== 'host' && k !== 'connection') headers.set(k, v);
      const body = chunks.length ? Buffer.concat(chunks) : undefined;
      fetch(new URL(req.url ?? '/', target), { method: req.method ?? 'GET', headers, ...(body ? { body } : {}) })
        .then((r) => {
          const out: Record<string, string> = {};
          r.headers.forEach((v, k) => {
            if (k !== 'content-length' && k !== 'transfer-encoding' && k !== 'content-encoding') out[k] = v;
          });
          res.writeHead(r.status, out);
          if (r.body) Readable.fromWeb(r.body as never).pipe(res);
          else res.end();
        })
        .catch(() => {
          res.writeHead(502);
          res.end();
        });
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    connections: () => connections,
    authorizations: () => [...auth],
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
