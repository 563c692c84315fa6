/**
 * The v1 `ctx.mcp` methods packs ported from major 1 call (host-capabilities.md §host.mcp): `invokeTool` and
 * `serverStatus`, beside the v2 `callTool` / `serverHealth` (RFC 0144 v2.0 §A.7: v2 "defines neither `invokeTool` nor
 * `serverStatus`; a host MAY keep them for packs ported from v1, with v1 semantics"). Both are built on the v2 calls
 * and answer the v1 shapes and v1 failure codes (`mcp_server_not_found`, `mcp_server_disconnected`,
 * `mcp_tool_not_found`, `mcp_tool_invocation_failed`); a governance refusal (an MHS endpoint, the interop floor, an
 * effect whose outcome is unknown) keeps its own code.
 */
import { ErrorCode, HostError } from '../../core/index.js';

/** `ctx.mcp.invokeTool` (v1). */
export interface McpInvokeToolRequest {
  serverId: string;
  toolName: string;
  args?: Record<string, unknown>;
  /** The call's identity: the same key in one node execution is the same call (answered once). */
  idempotencyKey: string;
}

/** What `invokeTool` resolves to: the tool's `structuredContent` when it gives one, else its `content`. */
export interface McpInvokeToolResult {
  result: unknown;
  isError?: boolean;
}

/** `ctx.mcp.serverStatus` (v1). */
export interface McpServerStatusV1 {
  serverId: string;
  status: 'connected' | 'disconnected' | 'error';
  protocolVersion?: string;
  serverInfo?: { name: string; version: string };
}

/** The v1 methods of `ctx.mcp`. */
export interface McpV1Methods {
  invokeTool(req: McpInvokeToolRequest): Promise<McpInvokeToolResult>;
  serverStatus(req: { serverId: string }): Promise<McpServerStatusV1>;
}

// MCP `tools/call`: an unknown tool is a JSON-RPC Invalid params error (schema/server/tools §Error handling).
const INVALID_PARAMS = -32602;

function str(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0;
}

/** The request checked (`validation_error` naming the field), so a bad call is refused before anything is sent. */
export function checkInvokeTool(req: unknown): McpInvokeToolRequest {
  const r = (req ?? {}) as Record<string, unknown>;
  for (const field of ['serverId', 'toolName', 'idempotencyKey'] as const)
    if (!str(r[field]))
      throw new HostError(ErrorCode.VALIDATION_ERROR, `invokeTool needs ${field} (a non-empty string)`, { field });
  if (r.args !== undefined && (typeof r.args !== 'object' || r.args === null || Array.isArray(r.args)))
    throw new HostError(ErrorCode.VALIDATION_ERROR, 'invokeTool args must be an object', { field: 'args' });
  return r as unknown as McpInvokeToolRequest;
}

/** A v2 rejection as its v1 failure code; codes v1 has no row for (governance refusals) are kept. */
export function toV1Failure(err: unknown, serverId: string, toolMissing = false): unknown {
  if (!(err instanceof HostError)) return err;
  const details = { ...err.details, serverId, v2Code: err.code };
  if (err.code === ErrorCode.NOT_FOUND)
    return new HostError(ErrorCode.MCP_SERVER_NOT_FOUND, err.message, details, { cause: err });
  if (err.code === ErrorCode.MCP_TRANSPORT)
    return new HostError(ErrorCode.MCP_SERVER_DISCONNECTED, err.message, details, { cause: err, retryable: true });
  if (err.code === ErrorCode.MCP_ERROR)
    return new HostError(
      toolMissing ? ErrorCode.MCP_TOOL_NOT_FOUND : ErrorCode.MCP_TOOL_INVOCATION_FAILED,
      err.message,
      details,
      { cause: err },
    );
  return err;
}

/** True when every page of the server's tool list lacks `name`. */
async function listedWithout(
  listTools: (serverId: string, cursor?: string) => Promise<Record<string, unknown>>,
  serverId: string,
  name: string,
): Promise<boolean> {
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const r = await listTools(serverId, cursor);
    if ((r.tools as Array<{ name?: unknown }> | undefined)?.some((t) => t.name === name)) return false;
    cursor = typeof r.nextCursor === 'string' && r.nextCursor ? r.nextCursor : undefined;
    if (!cursor) return true;
  }
  return false;
}

/**
 * `invokeTool` over `call` (the v2 `tools/call`, guarded or not). A JSON-RPC Invalid params error is
 * `mcp_tool_not_found` when the server's tool list lacks the tool, else `mcp_tool_invocation_failed`; a result with
 * `isError: true` resolves (the tool ran and reported a failure), as in v2.
 */
export async function invokeToolV1(
  req: unknown,
  call: (r: McpInvokeToolRequest) => Promise<Record<string, unknown>>,
  listTools: (serverId: string, cursor?: string) => Promise<Record<string, unknown>>,
): Promise<McpInvokeToolResult> {
  const r = checkInvokeTool(req);
  let out: Record<string, unknown>;
  try {
    out = await call(r);
  } catch (err) {
    const rpc = err instanceof HostError ? (err.details.error as { code?: unknown } | undefined) : undefined;
    const missing =
      rpc?.code === INVALID_PARAMS && (await listedWithout(listTools, r.serverId, r.toolName).catch(() => false));
    throw toV1Failure(err, r.serverId, missing);
  }
  return {
    result: out.structuredContent !== undefined ? out.structuredContent : out.content,
    ...(out.isError === true ? { isError: true } : {}),
  };
}
