/**
 * Streamable HTTP transport of the projection (wire contract §2): `POST /mcp` through the SDK's
 * `createMcpHandler` (both MCP revisions) and `GET /.well-known/mhs.json` (the descriptor).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
  type McpServerFactory,
} from '@modelcontextprotocol/server';
import { jcs } from '../core/index.js';
import type { SimEndpoint } from './endpoint.js';
import { createProjectionFactory } from './mcp-projection.js';

/** A listening HTTP projection. */
export interface HttpProjection {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Binds `host:port` (0 = ephemeral) and returns the bound port before the endpoint exists. */
export async function listen(host: string, port: number): Promise<http.Server> {
  const server = http.createServer();
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}

/** A node request (its body already read) as a web `Request` for a fetch-style MCP handler. */
export function toWebRequest(req: http.IncomingMessage, body: Buffer, host: string): Request {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (Array.isArray(v)) for (const x of v) headers.append(k, x);
    else if (v !== undefined) headers.set(k, v);
  }
  const init: RequestInit = { method: req.method ?? 'GET', headers };
  if (body.length && req.method !== 'GET' && req.method !== 'HEAD') init.body = new Uint8Array(body);
  return new Request(`http://${host}${req.url ?? '/'}`, init);
}

/** Streams a web `Response` (an MCP handler's answer, possibly SSE) to a node response. */
export async function writeWebResponse(res: http.ServerResponse, response: Response): Promise<void> {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (response.body) {
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      res.write(value);
    }
  }
  res.end();
}

/** Serves the endpoint on an already listening server. */
export function serveHttp(server: http.Server, ep: SimEndpoint): HttpProjection {
  const sockets = new WeakMap<Request, http.ServerResponse>();
  const factory: McpServerFactory = createProjectionFactory(ep, {
    closeConnection: (ctx) => {
      const res = ctx.requestInfo ? sockets.get(ctx.requestInfo) : undefined;
      res?.socket?.destroy();
    },
    // One implicit session per endpoint: stateless HTTP has no connection to key on (§4).
    connectionKey: () => 'http',
  });
  // Bodies up to 16 MiB reach the tool layer, which answers MHS.LIMIT.FRAME above 4 MiB.
  const handler = createMcpHandler(factory, { maxRequestBodySize: 16 * 1024 * 1024 });
  const { port, address } = server.address() as AddressInfo;
  const loopback = address === '127.0.0.1' || address === '::1';
  const hostHeader = `127.0.0.1:${port}`;
  server.on('request', (req, res) => {
    void (async () => {
      try {
        const path = (req.url ?? '/').split('?')[0];
        if (req.method === 'GET' && path === '/.well-known/mhs.json') {
          const text = jcs(ep.descriptor());
          res.writeHead(200, { 'content-type': 'application/json' }).end(text);
          return;
        }
        if (path !== '/mcp') {
          res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found"}');
          return;
        }
        const chunks: Buffer[] = [];
        for await (const c of req) chunks.push(c as Buffer);
        const request = toWebRequest(req, Buffer.concat(chunks), hostHeader);
        sockets.set(request, res);
        // DNS-rebinding protection when bound to loopback (the default).
        const rejected = loopback
          ? (hostHeaderValidationResponse(request, localhostAllowedHostnames()) ??
            originValidationResponse(request, localhostAllowedOrigins()))
          : undefined;
        const response = rejected ?? (await handler.fetch(request));
        if (res.destroyed) return;
        await writeWebResponse(res, response);
      } catch {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end();
      }
    })();
  });
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: async () => {
      await handler.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
