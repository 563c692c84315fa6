/**
 * The host-configured MCP servers behind `ctx.mcp` (RFC 0144 §mcp): `serverId` → a stdio command or a
 * Streamable HTTP URL. Loaded from a trusted operator file, validated whole with ajv; a bad file is refused
 * with `MHS.HOST.CONFIG_INVALID` and nothing of it is applied.
 */
import { readFileSync } from 'node:fs';
import { ErrorCode, HostError } from '../../core/index.js';
import { lazyValidator } from '../../core/lazy-validator.js';
import { belowFloor, revisionLadder } from './mcp-revisions.js';

/** A server started as a child process and spoken to over stdio. */
export interface McpStdioServer {
  transport: 'stdio';
  command: string;
  args?: string[];
  /** Extra environment on top of the MCP SDK's safe default environment. */
  env?: Record<string, string>;
  cwd?: string;
}

/** A server reached over Streamable HTTP. */
export interface McpHttpServer {
  transport: 'streamable-http';
  url: string;
  /** Extra request headers (e.g. `Authorization`), sent on every request to this server only. */
  headers?: Record<string, string>;
}

export type McpServerEntry = McpStdioServer | McpHttpServer;

/** The whole `--mcp-servers` file. */
export interface McpServersConfig {
  servers: Record<string, McpServerEntry>;
  /** The server a node without a `serverId` calls (`core.ai.callPrompt` with `config.mcp`). */
  defaultServer?: string;
  /**
   * Revision policy: `auto` (default) probes with `server/discover` and speaks 2026-07-28 when offered, else
   * the 2025-11-25 `initialize` handshake; `modern` pins 2026-07-28; `legacy` never probes.
   */
  protocol?: 'auto' | 'modern' | 'legacy';
  /**
   * The revision floor (an MCP revision date): a negotiation that would land below it fails closed with
   * `interop_version_unsupported` and is recorded (v2 interop.md §The floor). Default: the SDK's
   * `DEFAULT_NEGOTIATED_PROTOCOL_VERSION` (2025-03-26). It must not be above the policy's preferred revision.
   */
  minimumRevision?: string;
  /** Per-request timeout (default 60 000 ms); a request that exceeds it is a transport failure. */
  requestTimeoutMs?: number;
  /** How long an `unreachable`/`incompatible` health verdict is reused (no DiscoverResult, so no ttlMs). Default 0. */
  failedHealthTtlMs?: number;
}

const SERVER_ID = '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$';
const STRING_MAP = { type: 'object', additionalProperties: { type: 'string' } } as const;
const SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['servers'],
  properties: {
    servers: {
      type: 'object',
      propertyNames: { pattern: SERVER_ID },
      additionalProperties: {
        oneOf: [
          {
            type: 'object',
            additionalProperties: false,
            required: ['transport', 'command'],
            properties: {
              transport: { const: 'stdio' },
              command: { type: 'string', minLength: 1 },
              args: { type: 'array', items: { type: 'string' } },
              env: STRING_MAP,
              cwd: { type: 'string', minLength: 1 },
            },
          },
          {
            type: 'object',
            additionalProperties: false,
            required: ['transport', 'url'],
            properties: {
              transport: { const: 'streamable-http' },
              url: { type: 'string', pattern: '^https?://' },
              headers: STRING_MAP,
            },
          },
        ],
      },
    },
    defaultServer: { type: 'string', pattern: SERVER_ID },
    protocol: { enum: ['auto', 'modern', 'legacy'] },
    minimumRevision: { type: 'string', pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' },
    requestTimeoutMs: { type: 'integer', minimum: 1 },
    failedHealthTtlMs: { type: 'integer', minimum: 0 },
  },
} as const;

const validate = lazyValidator(SCHEMA, { allErrors: true });

function invalid(source: string, problems: Array<{ path: string; message: string }>): HostError {
  return new HostError(
    ErrorCode.HOST_CONFIG_INVALID,
    `MCP servers config ${source} is invalid`,
    { source, problems },
    { remediation: 'Fix the file (see docs/mcp-client.md); nothing of it was applied.' },
  );
}

const ENV_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * Replaces `${NAME}` in header and stdio `env` values with the variable from `env`, so credentials stay out of the
 * file. A variable that is not set is a problem at its path (its name is reported, never a value).
 */
function resolveSecrets(
  cfg: McpServersConfig,
  env: Readonly<Record<string, string | undefined>>,
  problems: Array<{ path: string; message: string }>,
): void {
  for (const [id, s] of Object.entries(cfg.servers)) {
    const [field, map] = s.transport === 'stdio' ? ['env', s.env] : ['headers', s.headers];
    for (const [k, v] of Object.entries(map ?? {}))
      (map as Record<string, string>)[k] = v.replace(ENV_REF, (ref, name: string) => {
        const value = env[name];
        if (value === undefined)
          problems.push({ path: `/servers/${id}/${field}/${k}`, message: `environment variable ${name} is not set` });
        return value ?? ref;
      });
  }
}

/**
 * Validates a parsed config and fills `${NAME}` references in header and stdio `env` values from `env` (default
 * the process environment). Raises `MHS.HOST.CONFIG_INVALID` (details: source, problems) for a schema violation,
 * a URL that does not parse, a `defaultServer` that names no server, or a referenced variable that is not set.
 * Returns a deep copy.
 */
export function parseMcpServersConfig(
  value: unknown,
  source = 'mcp-servers',
  env: Readonly<Record<string, string | undefined>> = process.env,
): McpServersConfig {
  if (!validate(value)) {
    throw invalid(
      source,
      (validate.errors ?? []).map((e) => ({ path: e.instancePath || '/', message: e.message ?? e.keyword })),
    );
  }
  const cfg = structuredClone(value) as McpServersConfig;
  const problems: Array<{ path: string; message: string }> = [];
  for (const [id, s] of Object.entries(cfg.servers)) {
    if (s.transport !== 'streamable-http') continue;
    try {
      new URL(s.url);
    } catch {
      problems.push({ path: `/servers/${id}/url`, message: 'is not a URL' });
    }
  }
  resolveSecrets(cfg, env, problems);
  if (cfg.minimumRevision !== undefined) {
    const ladder = revisionLadder(cfg.protocol, cfg.minimumRevision);
    if (belowFloor(ladder.preferredVersion, cfg.minimumRevision))
      problems.push({
        path: '/minimumRevision',
        message: `is above the preferred revision ${ladder.preferredVersion} of protocol "${cfg.protocol ?? 'auto'}": every negotiation would be refused`,
      });
  }
  if (cfg.defaultServer !== undefined && !(cfg.defaultServer in cfg.servers))
    problems.push({ path: '/defaultServer', message: `names no configured server (${cfg.defaultServer})` });
  if (problems.length) throw invalid(source, problems);
  return cfg;
}

/** Reads and validates a config file; an unreadable or non-JSON file is `MHS.HOST.CONFIG_INVALID` too. */
export function loadMcpServersConfig(file: string): McpServersConfig {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw invalid(file, [{ path: '/', message: err instanceof Error ? err.message : String(err) }]);
  }
  return parseMcpServersConfig(parsed, file);
}
