/**
 * The gateway's MCP server: one low-level SDK `Server` per serving unit (a stdio connection, or one HTTP request
 * under the stateless revision), serving both revisions (`2025-11-25` initialize, `2026-07-28` server/discover)
 * through the SDK's serving entries. `tools/list` and `tools/call` are the gateway's; everything else is the SDK's.
 */
import { Server } from '@modelcontextprotocol/server';
import type { McpRequestContext, McpServerFactory, ServerContext } from '@modelcontextprotocol/server';
import type { Gateway, GatewayCaller } from './gateway.js';
import type { ProgressSink } from './approval-progress.js';

/** Server name and version announced to clients. */
export const GATEWAY_SERVER_INFO = { name: 'mhs-host-gateway', version: '0.1.0' } as const;

function progressSink(ctx: ServerContext): ProgressSink | undefined {
  const token = ctx.mcpReq._meta?.progressToken;
  if (token === undefined) return undefined;
  return (p) => ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, ...p } });
}

/**
 * The server factory: `callerOf` names the principal of the unit (never read from tool arguments). With
 * `pushListChanged` (a connection: stdio, in-memory) each instance sends `notifications/tools/list_changed` itself
 * while it is open; HTTP instances live for one request, so the HTTP entry announces changes on its listen bus.
 */
export function gatewayServerFactory(
  gw: Gateway,
  callerOf: (ctx: McpRequestContext) => GatewayCaller,
  opts: { pushListChanged?: boolean } = {},
): McpServerFactory {
  return async (unit) => {
    const caller = callerOf(unit);
    const server = new Server(GATEWAY_SERVER_INFO, {
      capabilities: { tools: { listChanged: true } },
      instructions: await gw.instructions(),
    });
    server.setRequestHandler('tools/list', async () => ({ tools: await gw.listTools() }));
    server.setRequestHandler('tools/call', async (req, ctx) => {
      const progress = progressSink(ctx);
      return gw.callTool(req.params.name, req.params.arguments ?? {}, caller, {
        requestId: ctx.mcpReq.id,
        signal: ctx.mcpReq.signal,
        ...(progress ? { progress } : {}),
      });
    });
    if (opts.pushListChanged) {
      // A discarded server/discover probe is never connected: its sends fail and are dropped.
      const sub = gw.changes.subscribe(() => void server.sendToolListChanged().catch(() => undefined));
      server.onclose = () => sub.unsubscribe();
    }
    return server;
  };
}
