/**
 * `ctx.mcp.serverHealth` (RFC 0144 §mcp): reachable, unreachable or incompatible, decided by a `server/discover`
 * probe no older than its `ttlMs`, with the DiscoverResult when one was received. Never a connection or
 * session state (MCP 2026-07-28 has none). A server that only speaks the 2025-11-25 revision has no
 * `server/discover`; it is `reachable` (at the revision negotiated) when it answers a ping. An MHS endpoint is
 * `incompatible` with error code `MHS.HOST.MCP_SERVER_IS_MHS_ENDPOINT` (HOST-020).
 */
import {
  MAX_CACHE_TTL_MS,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  UnsupportedProtocolVersionError,
} from '@modelcontextprotocol/client';
import { ErrorCode, HostError, isoAt } from '../../core/index.js';
import type { Clock } from '../../core/index.js';
import { MCP_MODERN_REVISION } from './mcp-revisions.js';
import type { McpConnections } from './mcp-connections.js';
import { isMhsEndpointRefusal } from './mcp-mhs-guard.js';
import type { NegotiationRecorder } from './mcp-negotiation.js';
import type { McpServerHealth } from './mcp-surface.js';

/** JSON-RPC `UnsupportedProtocolVersion` (2026-07-28): the server answered, but shares no revision with us. */
const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** A failure of the network or the process (nothing usable answered), as opposed to an answer we cannot use. */
function isNetworkFailure(err: unknown): boolean {
  if (err instanceof TypeError) return true; // fetch failed
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^E[A-Z]+$/.test(code); // ECONNREFUSED, ENOENT, EPIPE, ...
}

function isIncompatible(err: unknown): boolean {
  if (err instanceof UnsupportedProtocolVersionError) return true;
  if (err instanceof ProtocolError) return err.code === UNSUPPORTED_PROTOCOL_VERSION;
  if (!(err instanceof SdkError)) return false;
  if (err.code === SdkErrorCode.InvalidResult || err.code === SdkErrorCode.UnsupportedResultType) return true;
  if (err.code !== SdkErrorCode.EraNegotiationFailed) return false;
  // Negotiation failed: the server answered without a revision we speak, unless the probe never got an answer
  // (a network or spawn failure, or an HTTP 5xx).
  const status = (err.data as { status?: unknown } | undefined)?.status;
  return !(typeof status === 'number' && status >= 500) && !isNetworkFailure(err.cause);
}

/** The underlying SDK error of a `ctx.mcp` rejection. */
function rootCause(err: unknown): unknown {
  return err instanceof HostError && err.cause !== undefined ? err.cause : err;
}

/** Health verdicts per server, each reused until its `ttlMs` (the DiscoverResult's, or `failedTtlMs`) runs out. */
export class McpHealth {
  private readonly cache = new Map<string, { health: McpServerHealth; expiresAt: number }>();
  private readonly inflight = new Map<string, Promise<McpServerHealth>>();

  constructor(
    private readonly pool: McpConnections,
    private readonly clock: Clock,
    private readonly failedTtlMs = 0,
  ) {}

  /**
   * Rejects only `not_found` for an unknown serverId; a failed probe is a verdict, not a rejection. A connection the
   * probe opens records its negotiation through `record`.
   */
  async check(serverId: string, signal?: AbortSignal, record?: NegotiationRecorder): Promise<McpServerHealth> {
    this.pool.entry(serverId);
    const hit = this.cache.get(serverId);
    if (hit && this.clock.now() < hit.expiresAt) return hit.health;
    let p = this.inflight.get(serverId);
    if (!p) {
      p = this.probe(serverId, signal, record).finally(() => this.inflight.delete(serverId));
      this.inflight.set(serverId, p);
    }
    return p;
  }

  private async probe(serverId: string, signal?: AbortSignal, record?: NegotiationRecorder): Promise<McpServerHealth> {
    const checkedAtMs = this.clock.now();
    const checkedAt = isoAt(checkedAtMs);
    let health: McpServerHealth;
    let ttl = this.failedTtlMs;
    try {
      const client = await this.pool.client(serverId, record);
      const timeout = this.pool.config.requestTimeoutMs ?? 60_000;
      if (client.getProtocolEra() === 'modern') {
        const discover = (await client.discover({ timeout, ...(signal ? { signal } : {}) })) as Record<string, unknown>;
        const offered = Array.isArray(discover.supportedVersions) ? (discover.supportedVersions as unknown[]) : [];
        health = {
          status: offered.includes(MCP_MODERN_REVISION) ? 'reachable' : 'incompatible',
          checkedAt,
          discover,
        };
        ttl = typeof discover.ttlMs === 'number' ? Math.min(Math.max(0, discover.ttlMs), MAX_CACHE_TTL_MS) : 0;
      } else {
        await client.ping({ timeout, ...(signal ? { signal } : {}) });
        health = { status: 'reachable', checkedAt };
      }
    } catch (err) {
      if (err instanceof HostError && err.code === ErrorCode.NOT_FOUND) throw err;
      health =
        isMhsEndpointRefusal(err) || (err instanceof HostError && err.code === ErrorCode.INTEROP_VERSION_UNSUPPORTED)
          ? // It answered, but ctx.mcp must not use it (HOST-020, or a revision below the floor): incompatible.
            { status: 'incompatible', checkedAt, error: { code: err.code, message: err.message } }
          : await this.failed(serverId, checkedAt, err);
    }
    this.cache.set(serverId, { health, expiresAt: checkedAtMs + ttl });
    return health;
  }

  private async failed(serverId: string, checkedAt: string, err: unknown): Promise<McpServerHealth> {
    const cause = rootCause(err);
    // A broken connection must not answer the next probe: reopen it then.
    await this.pool.drop(serverId);
    return {
      status: isIncompatible(cause) ? 'incompatible' : 'unreachable',
      checkedAt,
      error: {
        code:
          cause instanceof SdkError || cause instanceof ProtocolError ? String(cause.code) : ErrorCode.MCP_TRANSPORT,
        message: cause instanceof Error ? cause.message : String(cause),
      },
    };
  }

  /** Forgets every cached verdict. */
  clear(): void {
    this.cache.clear();
  }
}
