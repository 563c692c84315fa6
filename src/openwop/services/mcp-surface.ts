import type { McpV1Methods } from './mcp-v1-methods.js';

/**
 * `ctx.mcp` (RFC 0144 §mcp): MCP client calls against a host-configured `serverId`, at the revision the MCP client
 * negotiates (2026-07-28 when the server offers it, else 2025-11-25), results passed through unaltered.
 *
 * Each method rejects only with a `HostError` of one of four codes: `not_found` (the host configures no such
 * serverId; details.serverId), `mcp_error` (the server answered with a JSON-RPC error; details.error is its
 * `{code, message, data?}` unaltered), `mcp_transport_error` (connect, send, timeout or an unusable reply;
 * details.serverId, details.sdkCode?) or `MHS.HOST.MCP_SERVER_IS_MHS_ENDPOINT` (the server is an MHS endpoint, or
 * the call names an MHS tool; nothing was sent, HOST-020). Implemented by `createMcpFamily` (services/mcp-family.ts).
 */
export interface McpSurface {
  /** Resolves to the CallToolResult unaltered (content, structuredContent, isError, _meta), also when isError. */
  callTool(serverId: string, name: string, args?: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** Resolves to one ListToolsResult page unaltered (nextCursor, ttlMs, cacheScope included); `cursor` is forwarded. */
  listTools(serverId: string, cursor?: string): Promise<Record<string, unknown>>;
  /** Resolves to the ReadResourceResult unaltered. */
  readResource(serverId: string, uri: string): Promise<Record<string, unknown>>;
  /** A verdict from a `server/discover` probe no older than its ttlMs; rejects only `not_found`. */
  serverHealth(serverId: string): Promise<McpServerHealth>;
  /** v1 (mcp-v1-methods.ts): present on the host's surface, for packs ported from major 1. */
  invokeTool?: McpV1Methods['invokeTool'];
  /** v1 (mcp-v1-methods.ts): `connected` when the server's session opens, else `disconnected` or `error`. */
  serverStatus?: McpV1Methods['serverStatus'];
}

/** RFC 0144: reachable, unreachable or incompatible from a `server/discover` probe, never a session state. */
export interface McpServerHealth {
  status: 'reachable' | 'unreachable' | 'incompatible';
  /** When the probe that decided `status` ran (ISO 8601). */
  checkedAt: string;
  /** The DiscoverResult, when the probe received one (absent for a 2025-11-25-only server and failed probes). */
  discover?: Record<string, unknown>;
  /** Why the probe failed: the MCP SDK error code (or JSON-RPC code) and message. */
  error?: { code: string; message: string };
}
