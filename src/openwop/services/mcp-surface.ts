/**
 * `ctx.mcp` (RFC 0144 §mcp): MCP client calls against a host-configured `serverId`, results passed through
 * unaltered. Rejects only for an unknown serverId (`not_found`), an MCP error response (carried unaltered) or a
 * transport failure.
 */
export interface McpSurface {
  callTool(serverId: string, name: string, args?: Record<string, unknown>): Promise<Record<string, unknown>>;
  listTools(serverId: string, cursor?: string): Promise<Record<string, unknown>>;
  readResource(serverId: string, uri: string): Promise<Record<string, unknown>>;
  serverHealth(serverId: string): Promise<McpServerHealth>;
}

/** RFC 0144: reachable, unreachable or incompatible from a `server/discover` probe, never a session state. */
export interface McpServerHealth {
  status: 'reachable' | 'unreachable' | 'incompatible';
  /** When the probe that decided `status` ran (ISO 8601). */
  checkedAt: string;
  discover?: Record<string, unknown>;
  error?: { code: string; message: string };
}
