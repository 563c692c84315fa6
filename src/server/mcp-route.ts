/**
 * Mounts the MCP gateway's Streamable HTTP handler at `/mcp` (issue 14). The body is handed over as raw bytes, so
 * the SDK's own limit (4 MiB, HOST-063) answers an oversized frame with 413; the web `Response` (JSON or SSE) is
 * streamed back as it comes. Bound to loopback, the Host and Origin headers are checked (DNS-rebinding protection).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
} from '@modelcontextprotocol/server';
import { ErrorCode, HostError } from '../core/index.js';
import { refusal } from '../gateway/gateway-http.js';
import type { GatewayHttpHandler } from '../gateway/gateway-http.js';

/** Bodies up to this size reach the SDK handler, which refuses anything over 4 MiB itself. */
const RAW_BODY_LIMIT = 16 * 1024 * 1024;

/** The gateway mount: its handler and whether the server listens on loopback only. */
export interface McpMount {
  handler: GatewayHttpHandler;
  loopback: boolean;
}

function toWebRequest(req: FastifyRequest, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (Array.isArray(v)) for (const x of v) headers.append(k, x);
    else if (v !== undefined) headers.set(k, String(v));
  }
  const body = req.body instanceof Buffer && req.method === 'POST' ? new Uint8Array(req.body) : undefined;
  return new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url}`, {
    method: req.method,
    headers,
    signal,
    ...(body ? { body } : {}),
  });
}

async function send(reply: FastifyReply, response: Response): Promise<void> {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (response.body) {
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done || res.destroyed) break;
      res.write(value);
    }
  }
  res.end();
}

/** Registers `/mcp` (POST, GET, DELETE) in its own scope. */
export async function registerMcpRoute(app: FastifyInstance, mount: McpMount): Promise<void> {
  await app.register(async (r) => {
    // The route × role table's refusals (route-auth.ts) in the gateway's JSON-RPC form, as MCP clients read them.
    r.setErrorHandler(async (err, _req, reply) => {
      if (!(err instanceof HostError) || (err.code !== ErrorCode.UNAUTHORIZED && err.code !== ErrorCode.FORBIDDEN))
        throw err;
      const role = typeof err.details.role === 'string' ? err.details.role : undefined;
      const e =
        err.code === ErrorCode.UNAUTHORIZED
          ? err
          : new HostError(
              ErrorCode.FORBIDDEN,
              `the MCP gateway needs a token of role agent, not ${role}`,
              { role },
              { remediation: 'Create one with `mhs-host token add NAME --role agent`.' },
            );
      await send(reply, refusal(err.code === ErrorCode.UNAUTHORIZED ? 401 : 403, e));
    });
    r.removeAllContentTypeParsers();
    r.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: RAW_BODY_LIMIT }, (_req, body, done) =>
      done(null, body),
    );
    r.route({
      method: ['GET', 'POST', 'DELETE'],
      url: '/mcp',
      bodyLimit: RAW_BODY_LIMIT,
      handler: async (req, reply) => {
        const aborted = new AbortController();
        reply.raw.once('close', () => aborted.abort());
        const request = toWebRequest(req, aborted.signal);
        const rejected = mount.loopback
          ? (hostHeaderValidationResponse(request, localhostAllowedHostnames()) ??
            originValidationResponse(request, localhostAllowedOrigins()))
          : undefined;
        await send(reply, rejected ?? (await mount.handler.fetch(request)));
      },
    });
  });
}
