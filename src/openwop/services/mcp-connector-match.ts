/**
 * Configuration side of the `ctx.mcp` MHS guard (HOST-020, issue 14): a `--mcp-servers` entry that names a
 * connector row (HOST-061) — its MCP `url`, a URL under its `base_url`, or its stdio `command` argv — is an MHS
 * endpoint and is refused, so the governed connector stays the only client of a device.
 */
import { ErrorCode, HostError } from '../../core/index.js';
import type { ConnectorRow } from '../../mhs/connector-row.js';
import { MHS_REFUSAL_REMEDIATION, mhsEndpointRefusal } from './mcp-mhs-guard.js';
import type { McpServerEntry, McpServersConfig } from './mcp-servers-config.js';

/** The fields of a connector row that locate its endpoint. */
export type ConnectorTarget = Pick<ConnectorRow, 'connector_id' | 'url' | 'base_url' | 'command'>;

/** Which row field an entry matched. */
export type ConnectorMatchField = 'url' | 'base_url' | 'command';

/** One servers entry that names a connector row. */
export interface ConnectorMatch {
  serverId: string;
  connector_id: string;
  match: ConnectorMatchField;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * A comparable form of an HTTP URL: scheme and host lower-cased (by `URL`), every loopback name as one, the
 * default port explicit, no fragment, no trailing slash. Undefined when `raw` does not parse.
 */
export function normaliseEndpointUrl(raw: string): string | undefined {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return undefined;
  }
  const host = LOOPBACK.has(u.hostname) ? 'loopback' : u.hostname;
  const port = u.port || (u.protocol === 'https:' ? '443' : '80');
  return `${u.protocol}//${host}:${port}${u.pathname.replace(/\/+$/, '')}${u.search}`;
}

function sameArgv(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** The row field `entry` points at, if any. */
export function matchConnector(entry: McpServerEntry, row: ConnectorTarget): ConnectorMatchField | undefined {
  if (entry.transport === 'stdio')
    return row.command?.length && sameArgv([entry.command, ...(entry.args ?? [])], row.command) ? 'command' : undefined;
  const url = normaliseEndpointUrl(entry.url);
  if (url === undefined) return undefined;
  if (row.url !== undefined && normaliseEndpointUrl(row.url) === url) return 'url';
  const base = row.base_url !== undefined ? normaliseEndpointUrl(row.base_url) : undefined;
  // The descriptor at base_url announced an MHS endpoint: anything under that base is it.
  if (base !== undefined && (url === base || url.startsWith(`${base}/`))) return 'base_url';
  return undefined;
}

/** Every servers entry of `cfg` that names one of `rows`. */
export function connectorMatches(cfg: McpServersConfig, rows: readonly ConnectorTarget[]): ConnectorMatch[] {
  const out: ConnectorMatch[] = [];
  for (const [serverId, entry] of Object.entries(cfg.servers))
    for (const row of rows) {
      const match = matchConnector(entry, row);
      if (match) out.push({ serverId, connector_id: row.connector_id, match });
    }
  return out;
}

/**
 * Refuses the whole servers file when an entry names a connector row; nothing of it is applied.
 * @throws HostError `MHS.HOST.MCP_SERVER_IS_MHS_ENDPOINT` (details: source, servers [{serverId, connector_id, match}]).
 */
export function assertNoConnectorServers(
  cfg: McpServersConfig,
  rows: readonly ConnectorTarget[],
  source = 'mcp-servers',
): void {
  const servers = connectorMatches(cfg, rows);
  if (!servers.length) return;
  throw new HostError(
    ErrorCode.HOST_MCP_SERVER_IS_MHS_ENDPOINT,
    `MCP servers config ${source} names MHS endpoints (${servers.map((s) => `${s.serverId} = connector ${s.connector_id}`).join(', ')})`,
    { source, servers },
    { remediation: MHS_REFUSAL_REMEDIATION, retryable: false },
  );
}

/** The connect-time refusal of `serverId` when its entry names one of `rows` (checked before anything is spawned). */
export function connectorRefusal(
  serverId: string,
  entry: McpServerEntry,
  rows: readonly ConnectorTarget[],
): HostError | undefined {
  for (const row of rows)
    if (matchConnector(entry, row))
      return mhsEndpointRefusal(serverId, 'connector-row', { connector_id: row.connector_id });
  return undefined;
}
