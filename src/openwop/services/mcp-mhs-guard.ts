/**
 * Keeps `ctx.mcp` away from MHS endpoints (HOST-020: the governed call is the only path to a device; issue 14):
 * a connected server whose own answer shows the MHS projection (a tool of the `mhs__` family or the
 * `mhs://manifest` resource, wire contract §3-§4) is refused before any `tools/call` is sent, and a call that
 * names an MHS tool or an `mhs://` resource is refused locally. Every refusal is
 * `MHS.HOST.MCP_SERVER_IS_MHS_ENDPOINT`.
 */
import type { Client } from '@modelcontextprotocol/client';
import { ErrorCode, HostError } from '../../core/index.js';
import { MHS_MANIFEST_URI, isMhsToolName } from '../../mhs/tool-names.js';

/** How an MHS endpoint was recognised. */
export type MhsDetection = 'tools' | 'manifest-resource' | 'connector-row' | 'call-name';

/** The remediation every refusal carries. */
export const MHS_REFUSAL_REMEDIATION =
  'MHS endpoints are reached only through the governed path: use an mhs.invoke node or the MCP gateway ' +
  '(mhs-host mcp), and remove this server from the --mcp-servers file.';

/** At most this many offending tool names are carried in a refusal's details. */
const MAX_NAMED_TOOLS = 5;

/** Builds the refusal of `serverId` (never retryable: the server stays an MHS endpoint). */
export function mhsEndpointRefusal(
  serverId: string,
  detectedBy: MhsDetection,
  extra: { phase?: 'connect' | 'request'; tools?: string[]; connector_id?: string; name?: string } = {},
): HostError {
  const { phase = 'connect', ...rest } = extra;
  return new HostError(
    ErrorCode.HOST_MCP_SERVER_IS_MHS_ENDPOINT,
    `MCP server ${serverId} is an MHS endpoint; ctx.mcp does not reach devices`,
    { serverId, phase, detectedBy, ...rest },
    { remediation: MHS_REFUSAL_REMEDIATION, retryable: false },
  );
}

/** True when `err` is an MHS-endpoint refusal. */
export function isMhsEndpointRefusal(err: unknown): err is HostError {
  return err instanceof HostError && err.code === ErrorCode.HOST_MCP_SERVER_IS_MHS_ENDPOINT;
}

/** The MHS tools among `tools` (any `mhs__` name, wire contract §4), at most {@link MAX_NAMED_TOOLS}. */
export function mhsToolsIn(tools: readonly unknown[]): string[] {
  const names = tools
    .map((t) => (t as { name?: unknown } | null)?.name)
    .filter((n): n is string => typeof n === 'string' && isMhsToolName(n));
  return names.slice(0, MAX_NAMED_TOOLS);
}

/**
 * Asks a freshly connected server what it serves (the SDK's aggregated `listTools` / `listResources`, cache
 * bypassed, each only when its capability is advertised) and throws the refusal when it is an MHS endpoint.
 * A list that cannot be read fails the connect (fail closed); nothing but list requests is sent.
 */
export async function assertNotMhsEndpoint(client: Client, serverId: string, timeout: number): Promise<void> {
  const opts = { timeout, cacheMode: 'bypass' as const };
  const caps = client.getServerCapabilities();
  if (caps?.tools) {
    const named = mhsToolsIn((await client.listTools(undefined, opts)).tools);
    if (named.length) throw mhsEndpointRefusal(serverId, 'tools', { tools: named });
  }
  if (!caps?.resources) return;
  const { resources } = await client.listResources(undefined, opts);
  if (resources.some((r) => r.uri === MHS_MANIFEST_URI)) throw mhsEndpointRefusal(serverId, 'manifest-resource');
}

/**
 * Refuses, before anything is sent, a request that names the MHS projection: a `tools/call` of an `mhs__` tool or a
 * `resources/read` of an `mhs://` URI (reserved by the wire contract, so no ordinary server needs them).
 */
export function refuseMhsRequest(serverId: string, method: string, params: Record<string, unknown>): void {
  const name = method === 'tools/call' ? params.name : method === 'resources/read' ? params.uri : undefined;
  if (typeof name !== 'string') return;
  if (method === 'tools/call' ? isMhsToolName(name) : name.startsWith('mhs://'))
    throw mhsEndpointRefusal(serverId, 'call-name', { phase: 'request', name });
}

/** The refusal when a `tools/list` page returned later shows MHS tools (a server may change its list). */
export function mhsRefusalOfResult(
  serverId: string,
  method: string,
  result: Record<string, unknown>,
): HostError | undefined {
  if (method !== 'tools/list' || !Array.isArray(result.tools)) return undefined;
  const named = mhsToolsIn(result.tools as unknown[]);
  return named.length ? mhsEndpointRefusal(serverId, 'tools', { phase: 'request', tools: named }) : undefined;
}
