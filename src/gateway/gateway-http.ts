/**
 * The gateway over Streamable HTTP (mounted at `/mcp` by `serve`): the SDK's `createMcpHandler` (2026-07-28
 * stateless, with the stateless 2025-11-25 fallback), behind bearer authentication with an `agent` token. No
 * token, another role or a revoked token is refused before any server instance exists, so nothing is listed. The
 * principal of every call is the token's identity. Tool-list changes reach open `subscriptions/listen` streams.
 */
import { createMcpHandler } from '@modelcontextprotocol/server';
import type { AuthInfo } from '@modelcontextprotocol/server';
import { ErrorCode, HostError } from '../core/index.js';
import type { TokenIdentity } from '../policy/tokens.js';
import type { Gateway, GatewayCaller } from './gateway.js';
import { gatewayServerFactory } from './gateway-server.js';
import { GATEWAY_MAX_FRAME_BYTES } from './stdio-frame-guard.js';

/** Verifies a bearer token (the policy layer's token store fits). */
export interface AgentTokenVerifier {
  verify(bearer: string): Promise<TokenIdentity | null>;
}

/** A fetch-shaped gateway handler. */
export interface GatewayHttpHandler {
  fetch(request: Request): Promise<Response>;
  close(): Promise<void>;
}

/** A refusal in the gateway's wire form: a JSON-RPC error carrying the host error (401 with `WWW-Authenticate`). */
export function refusal(status: 401 | 403, e: HostError): Response {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (status === 401) headers['www-authenticate'] = 'Bearer realm="mhs-host", error="invalid_token"';
  return new Response(
    JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: e.message, data: e.toWire() } }),
    { status, headers },
  );
}

/** Authenticates the request; an `agent` identity, or the refusal to send. */
export async function agentOf(request: Request, tokens: AgentTokenVerifier): Promise<TokenIdentity | Response> {
  const h = request.headers.get('authorization');
  const m = h ? /^Bearer\s+(\S+)\s*$/i.exec(h) : null;
  if (!m?.[1]) return refusal(401, new HostError(ErrorCode.UNAUTHORIZED, 'an agent bearer token is required'));
  const who = await tokens.verify(m[1]);
  if (!who) return refusal(401, new HostError(ErrorCode.UNAUTHORIZED, 'the bearer token is unknown or revoked'));
  if (who.role !== 'agent')
    return refusal(
      403,
      new HostError(
        ErrorCode.FORBIDDEN,
        `the MCP gateway needs a token of role agent, not ${who.role}`,
        { role: who.role },
        { remediation: 'Create one with `mhs-host token add NAME --role agent`.' },
      ),
    );
  return who;
}

function callerOf(auth: AuthInfo | undefined): GatewayCaller {
  const id = String(auth?.extra?.token_id ?? 'unknown');
  const name = auth?.clientId ?? 'unknown';
  return { principal: { kind: 'agent', id, name }, sessionId: `mcp:${name}` };
}

/** Creates the handler; requests must come through {@link GatewayHttpHandler.fetch}. */
export function createGatewayHttpHandler(
  gw: Gateway,
  tokens: AgentTokenVerifier,
  onError?: (err: Error) => void,
): GatewayHttpHandler {
  const mcp = createMcpHandler(
    gatewayServerFactory(gw, (unit) => callerOf(unit.authInfo)),
    { maxRequestBodySize: GATEWAY_MAX_FRAME_BYTES, ...(onError ? { onerror: onError } : {}) },
  );
  const sub = gw.changes.subscribe(() => mcp.notify.toolsChanged());
  return {
    async fetch(request) {
      const who = await agentOf(request, tokens);
      if (who instanceof Response) return who;
      const authInfo: AuthInfo = {
        token: 'verified',
        clientId: who.name,
        scopes: ['agent'],
        extra: { token_id: who.id },
      };
      return mcp.fetch(request, { authInfo });
    },
    async close() {
      sub.unsubscribe();
      await mcp.close();
    },
  };
}
