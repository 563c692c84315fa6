/**
 * The `mcp` host service family (RFC 0144 §mcp, RFC 0020): advertises `mcp.supported`, binds `ctx.mcp` for every
 * node against the host-configured servers, brings the `core.conformance.mcp-client` node (and, when a default
 * server is configured, the MCP-only `core.ai.callPrompt`), and closes every MCP connection with the host.
 */
import { TRACEPARENT_META_KEY } from '@modelcontextprotocol/client';
import { SpanStatusCode } from '@opentelemetry/api';
import { ErrorCode, HostError, isoAt } from '../../core/index.js';
import type { Clock } from '../../core/index.js';
import type { NodeModule } from '../node-registry.js';
import { mcpCallPromptNode, mcpClientConformanceNode } from '../nodes/mcp-nodes.js';
import type { ServiceFamily } from '../service-family.js';
import { contextFrom, startSpan } from '../tracing.js';
import { McpConnections } from './mcp-connections.js';
import type { McpConnectionsOptions, McpMethod } from './mcp-connections.js';
import { NEGOTIATION_DECIDED } from './mcp-negotiation.js';
import type { NegotiationRecorder } from './mcp-negotiation.js';
import type { RunEventInput } from '../types.js';
import { McpHealth } from './mcp-health.js';
import type { McpRevisionLadder } from './mcp-revisions.js';
import type { McpServersConfig } from './mcp-servers-config.js';
import type { McpSurface } from './mcp-surface.js';
import { invokeToolV1 } from './mcp-v1-methods.js';
import type { McpServerStatusV1 } from './mcp-v1-methods.js';

/** Options of {@link createMcpFamily}. */
export interface McpFamilyOptions extends McpConnectionsOptions {
  /** Validated config (see `loadMcpServersConfig` / `parseMcpServersConfig`). */
  config: McpServersConfig;
  /** Decides the age of `serverHealth` verdicts (inject a `SimulatedClock` in tests). */
  clock: Clock;
  /**
   * Register `core.ai.callPrompt` for `config.mcp` tool calls (default: when `config.defaultServer` is set).
   * Turn it off when another family owns `core.ai.callPrompt`; that node can delegate to `executeMcpToolCall`.
   */
  callPromptNode?: boolean;
}

/** The `mcp` family plus handles tests and the CLI use. */
export interface McpFamily extends ServiceFamily {
  readonly connections: McpConnections;
  readonly health: McpHealth;
  /** A `ctx.mcp` surface not tied to a node (no cancellation signal, no traceparent). */
  surface(): McpSurface;
  /**
   * A separate pool over `config` with this family's options (the HOST-020 connector check, the clock): the MCP
   * invoke seam's, against a server the operator did not configure. The caller closes it.
   */
  pool(config: McpServersConfig): McpConnections;
  /** Closes every MCP connection (stdio children exit). */
  close(): Promise<void>;
}

function withTrace(params: Record<string, unknown>, traceparent: string | undefined): Record<string, unknown> {
  return traceparent ? { ...params, _meta: { [TRACEPARENT_META_KEY]: traceparent } } : params;
}

/**
 * One client span per MCP request, child of the node span; its traceparent goes into the request's `_meta`.
 * No session id (2026-07-28 has none) and no tool arguments or results on the span (content stays out of traces).
 */
async function traced<T>(
  connections: McpConnections,
  method: McpMethod,
  serverId: string,
  parent: string | undefined,
  fn: (traceparent: string | undefined) => Promise<T>,
): Promise<T> {
  const { span, traceparent } = startSpan(`mcp ${method}`, contextFrom(parent), {
    'mcp.method.name': method,
    'openwop.mcp.server_id': serverId,
  });
  try {
    const out = await fn(traceparent);
    const revision = await connections.revision(serverId);
    if (revision) span.setAttribute('mcp.protocol.version', revision);
    span.setStatus({ code: SpanStatusCode.OK });
    return out;
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw err;
  } finally {
    span.end();
  }
}

/**
 * `ctx.mcp` over a connection pool: each method resolves to the server's result as decoded by the MCP SDK
 * (no aggregation, no cache, no rewriting) and rejects only `not_found`, `mcp_error` (JSON-RPC error unaltered
 * in `details.error`) or `mcp_transport_error`.
 */
export function mcpSurface(
  connections: McpConnections,
  health: McpHealth,
  ctx: {
    signal?: AbortSignal;
    traceparent?: string | undefined;
    emit?: (events: RunEventInput[]) => Promise<unknown>;
  } = {},
): McpSurface {
  const { signal, traceparent, emit } = ctx;
  // RFC 0242 §B.1: a negotiation made inside a run is recorded on that run's log (node-scoped).
  const record: NegotiationRecorder | undefined = emit
    ? async (decision) => {
        await emit([{ type: NEGOTIATION_DECIDED, payload: { ...decision } }]);
      }
    : undefined;
  const send = (serverId: string, method: McpMethod, params: Record<string, unknown>) =>
    traced(connections, method, serverId, traceparent, (tp) =>
      connections.request(serverId, method, withTrace(params, tp), signal, record),
    );
  const callTool = (serverId: string, name: string, args?: Record<string, unknown>) =>
    send(serverId, 'tools/call', { name, ...(args !== undefined ? { arguments: args } : {}) });
  const listTools = (serverId: string, cursor?: string) =>
    send(serverId, 'tools/list', cursor !== undefined ? { cursor } : {});
  return {
    callTool,
    listTools,
    readResource: (serverId, uri) => send(serverId, 'resources/read', { uri }),
    serverHealth: (serverId) => health.check(serverId, signal, record),
    invokeTool: (req) => invokeToolV1(req, (r) => callTool(r.serverId, r.toolName, r.args), listTools),
    serverStatus: (req) => serverStatusV1(connections, req, record),
  };
}

/**
 * v1 `serverStatus` (host-capabilities.md §host.mcp): `connected` with the negotiated revision and the server's
 * `serverInfo` once a session to it opens (opening one when none is open), `disconnected` when it cannot be reached,
 * `error` when the host refuses it (an MHS endpoint, a revision below the floor). Rejects `mcp_server_not_found`.
 */
export async function serverStatusV1(
  connections: McpConnections,
  req: { serverId: string },
  record?: NegotiationRecorder,
): Promise<McpServerStatusV1> {
  const serverId = req?.serverId;
  if (typeof serverId !== 'string' || !serverId)
    throw new HostError(ErrorCode.VALIDATION_ERROR, 'serverStatus needs serverId (a non-empty string)', {
      field: 'serverId',
    });
  if (!connections.has(serverId))
    throw new HostError(ErrorCode.MCP_SERVER_NOT_FOUND, `no MCP server is configured as ${serverId}`, { serverId });
  try {
    const client = await connections.client(serverId, record);
    const protocolVersion = client.getNegotiatedProtocolVersion();
    const info = client.getServerVersion();
    return {
      serverId,
      status: 'connected',
      ...(protocolVersion ? { protocolVersion } : {}),
      ...(info ? { serverInfo: { name: info.name, version: info.version } } : {}),
    };
  } catch (err) {
    if (!(err instanceof HostError)) throw err;
    return { serverId, status: err.code === ErrorCode.MCP_TRANSPORT ? 'disconnected' : 'error' };
  }
}

/**
 * The v2 `mcp` record of the client facet (`schemas/v2/capabilities.schema.json#/properties/mcp`, RFC 0204 `client`,
 * interop.md §The facets; witness `seam-gated` as the v2 declaration gives it): the ladder `ctx.mcp` negotiates within
 * and `refreshedAt`, the UTC date the ladder was read from the SDK (each read of the root re-reads it). No inbound
 * facet fields (`serverUrls`, `serverMount`): the host serves no MCP server to OpenWOP clients.
 */
export function mcpV2Record(ladder: McpRevisionLadder, refreshedAt: string): Record<string, unknown> {
  return {
    witness: 'seam-gated',
    revisions: ladder.revisions,
    preferredVersion: ladder.preferredVersion,
    minimumRevision: ladder.minimumRevision,
    refreshedAt,
    client: true,
  };
}

/**
 * Builds the `mcp` family. Nothing connects until a node calls `ctx.mcp` (lazy); connections are reused across
 * nodes and runs and closed by `close()` (stdio children exit).
 */
export function createMcpFamily(o: McpFamilyOptions): McpFamily {
  const options: McpConnectionsOptions = { now: () => new Date(o.clock.now()), ...o };
  const connections = new McpConnections(o.config, options);
  const health = new McpHealth(connections, o.clock, o.config.failedHealthTtlMs ?? 0);
  const nodes: NodeModule[] = [mcpClientConformanceNode];
  if (o.callPromptNode ?? o.config.defaultServer !== undefined) nodes.push(mcpCallPromptNode(o.config.defaultServer));
  return {
    name: 'mcp',
    connections,
    health,
    nodes,
    capabilities: () => ({ mcp: { supported: true } }),
    v2Records: () => ({ mcp: mcpV2Record(connections.ladder(), isoAt(o.clock.now()).slice(0, 10)) }),
    bind: (ctx) => ({ mcp: mcpSurface(connections, health, ctx) }),
    surface: () => mcpSurface(connections, health),
    pool: (config) => new McpConnections(config, options),
    close: () => connections.close(),
  };
}
