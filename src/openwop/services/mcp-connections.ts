/**
 * One lazily opened, reused MCP client per configured `serverId` (RFC 0144 §mcp), on the official MCP v2 client.
 * The revision is negotiated by the SDK (`versionNegotiation`: `server/discover` first, 2026-07-28 when offered,
 * else the `initialize` handshake) within the revision ladder (mcp-revisions.ts): the SDK is given only the rungs at
 * or above `minimumRevision`, so a server answering with an older revision is refused before anything else is sent
 * (`interop_version_unsupported`, v2 interop.md §The floor). Each outcome is handed to the recorder of the call that
 * opened the connection (`negotiation.decided`, §The audit event). A connection whose transport closes is dropped and
 * reopened on the next call. Every failure leaves as a `HostError`: `not_found`, `mcp_error` (the JSON-RPC error
 * carried unaltered in `details.error`), `mcp_transport_error`, `interop_version_unsupported`, or
 * `MHS.HOST.MCP_SERVER_IS_MHS_ENDPOINT` for a server that is an MHS endpoint (HOST-020: refused before any
 * `tools/call`, and for the rest of the pool's life).
 */
import {
  Client,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import type { Transport } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { ErrorCode, HostError } from '../../core/index.js';
import { connectorRefusal } from './mcp-connector-match.js';
import type { ConnectorTarget } from './mcp-connector-match.js';
import { assertNotMhsEndpoint, isMhsEndpointRefusal, mhsRefusalOfResult, refuseMhsRequest } from './mcp-mhs-guard.js';
import { NEGOTIATION_DECIDED, peerDigestOf, watchInitializeOffer } from './mcp-negotiation.js';
import type { NegotiationDecided, NegotiationRecorder } from './mcp-negotiation.js';
import { MCP_MODERN_REVISION, belowFloor, revisionLadder } from './mcp-revisions.js';
import type { McpRevisionLadder } from './mcp-revisions.js';
import type { McpServerEntry, McpServersConfig } from './mcp-servers-config.js';

export { MCP_MODERN_REVISION } from './mcp-revisions.js';
export { NEGOTIATION_DECIDED };

/** SDK failures of one request that leave the connection usable. */
const KEEPS_CONNECTION: ReadonlySet<SdkErrorCode> = new Set([
  SdkErrorCode.RequestTimeout,
  SdkErrorCode.InvalidResult,
  SdkErrorCode.UnsupportedResultType,
  SdkErrorCode.InputRequiredRoundsExceeded,
  SdkErrorCode.CapabilityNotSupported,
  SdkErrorCode.MethodNotSupportedByProtocolVersion,
]);

/** The request methods `ctx.mcp` sends. */
export type McpMethod = 'tools/call' | 'tools/list' | 'resources/read' | 'server/discover';

/** Options of {@link McpConnections}. */
export interface McpConnectionsOptions {
  /** Client identity sent to servers (default `mhs-host` 0.1.0). */
  clientInfo?: { name: string; version: string };
  /** stdio children's stderr (default `ignore`; `inherit` for debugging). */
  stderr?: 'ignore' | 'inherit';
  /**
   * The connector rows of MHS endpoints, read before each connect: an entry naming one is refused before anything
   * is spawned or sent (HOST-020). A read that fails refuses the connect (fail closed).
   */
  connectorRows?: () => Promise<readonly ConnectorTarget[]>;
  /** Told once per server refused as an MHS endpoint, and of each call refused for naming one (serve logs both). */
  onRefused?: (err: HostError) => void;
  /** Records a negotiation no run made (a pool used outside a node); `serve` has no such path. */
  onNegotiated?: NegotiationRecorder;
  /** Decides the `at` of each record (default: the system clock). */
  now?: () => Date;
  /** @internal Wraps each transport before connect (tests sniff the methods sent). */
  _transport?: (serverId: string, transport: Transport) => Transport;
}

/** The `{code, message, data?}` of a JSON-RPC error response, as the server sent it. */
export interface McpWireError {
  code: number;
  message: string;
  data?: unknown;
}

/** The MCP error carried by a `mcp_error` rejection, or undefined for any other error. */
export function mcpWireError(err: unknown): McpWireError | undefined {
  if (!(err instanceof HostError) || err.code !== ErrorCode.MCP_ERROR) return undefined;
  return err.details.error as McpWireError;
}

/** Maps anything a client call threw to the `ctx.mcp` rejection vocabulary. */
export function toMcpRejection(serverId: string, err: unknown, phase: 'connect' | 'request'): HostError {
  if (err instanceof HostError) return err;
  if (err instanceof ProtocolError) {
    const error: McpWireError = { code: err.code, message: err.message };
    if (err.data !== undefined) error.data = err.data;
    return new HostError(ErrorCode.MCP_ERROR, err.message, { serverId, error }, { cause: err });
  }
  const sdkCode = err instanceof SdkError ? err.code : undefined;
  const message = err instanceof Error ? err.message : String(err);
  return new HostError(
    ErrorCode.MCP_TRANSPORT,
    `MCP server ${serverId}: ${message}`,
    { serverId, phase, ...(sdkCode ? { sdkCode } : {}) },
    // Nothing reached the server when the connection could not be opened, so a retry is safe.
    { cause: err, retryable: phase === 'connect' },
  );
}

function buildTransport(entry: McpServerEntry, opts: McpConnectionsOptions): Transport {
  if (entry.transport === 'stdio') {
    return new StdioClientTransport({
      command: entry.command,
      args: entry.args ?? [],
      env: { ...getDefaultEnvironment(), ...entry.env },
      ...(entry.cwd ? { cwd: entry.cwd } : {}),
      stderr: opts.stderr ?? 'ignore',
    });
  }
  return new StreamableHTTPClientTransport(new URL(entry.url), {
    ...(entry.headers ? { requestInit: { headers: entry.headers } } : {}),
  });
}

/** `interop_version_unsupported` for a server whose revision the ladder does not hold. */
function unsupported(serverId: string, offered: string | undefined, ladder: McpRevisionLadder): HostError {
  const below = offered !== undefined && belowFloor(offered, ladder.minimumRevision);
  return new HostError(
    ErrorCode.INTEROP_VERSION_UNSUPPORTED,
    `MCP server ${serverId} answered with revision ${offered ?? '(none)'}, ${below ? `below the floor ${ladder.minimumRevision}` : 'which this host does not offer'}; the connection was closed before any request`,
    {
      serverId,
      ...(offered !== undefined ? { offered } : {}),
      minimumRevision: ladder.minimumRevision,
      revisions: ladder.revisions,
    },
    { remediation: 'Upgrade the MCP server, or lower minimumRevision in the --mcp-servers file (docs/mcp-client.md).' },
  );
}

/**
 * A failed connect that was a negotiation outcome: the server named an `initialize` revision the ladder refuses
 * (`interop_version_unsupported`), or the SDK's era negotiation found no mutual revision (kept as
 * `mcp_transport_error`, recorded as refused). Anything else (no server, a broken reply) decided no revision.
 */
function refusalOf(
  serverId: string,
  err: unknown,
  offered: string | undefined,
  ladder: McpRevisionLadder,
): { reason: string; requested?: string; error?: HostError } | undefined {
  if (offered !== undefined && !ladder.revisions.includes(offered))
    return { reason: belowFloor(offered, ladder.minimumRevision) ? 'below-floor' : 'unsupported-revision' };
  if (err instanceof SdkError && err.code === SdkErrorCode.EraNegotiationFailed)
    return {
      reason: 'negotiation-failed',
      requested: ladder.preferredVersion,
      error: toMcpRejection(serverId, err, 'connect'),
    };
  return undefined;
}

/** The client pool: one client per serverId, opened on first use, closed by {@link McpConnections.close}. */
export class McpConnections {
  private readonly clients = new Map<string, Promise<Client>>();
  /** Servers found to be MHS endpoints: refused without another connect until the pool is rebuilt. */
  private readonly refused = new Map<string, HostError>();
  private closed = false;

  constructor(
    readonly config: McpServersConfig,
    private readonly opts: McpConnectionsOptions = {},
  ) {}

  /** True when `serverId` is configured. */
  has(serverId: string): boolean {
    return Object.hasOwn(this.config.servers, serverId);
  }

  /** Raises `not_found` (details: serverId) for a serverId the host does not configure. */
  entry(serverId: string): McpServerEntry {
    if (!this.has(serverId))
      throw new HostError(ErrorCode.NOT_FOUND, `no MCP server is configured as ${serverId}`, { serverId });
    return this.config.servers[serverId]!;
  }

  /** The ladder `ctx.mcp` negotiates within (re-read from the SDK at each call). */
  ladder(): McpRevisionLadder {
    return revisionLadder(this.config.protocol, this.config.minimumRevision);
  }

  /**
   * The connected client of `serverId` (connecting on first use, bounded by `requestTimeoutMs`). The connect is
   * shared by concurrent callers, so no caller's cancellation aborts it; the negotiation it makes is recorded by
   * `record` of the caller that opened it (else `onNegotiated`). Rejects `not_found`, `mcp_transport_error` or
   * `interop_version_unsupported`.
   */
  client(serverId: string, record?: NegotiationRecorder): Promise<Client> {
    const entry = this.entry(serverId);
    if (this.closed)
      return Promise.reject(toMcpRejection(serverId, new Error('the MCP client pool is closed'), 'connect'));
    const refused = this.refused.get(serverId);
    if (refused) return Promise.reject(refused);
    let p = this.clients.get(serverId);
    if (!p) {
      p = this.open(serverId, entry, record ?? this.opts.onNegotiated);
      this.clients.set(serverId, p);
      // A failed connect is not cached: the next call tries again.
      p.catch(() => {
        if (this.clients.get(serverId) === p) this.clients.delete(serverId);
      });
    }
    return p;
  }

  private async open(
    serverId: string,
    entry: McpServerEntry,
    record: NegotiationRecorder | undefined,
  ): Promise<Client> {
    let rows: readonly ConnectorTarget[];
    try {
      rows = (await this.opts.connectorRows?.()) ?? [];
    } catch (err) {
      throw toMcpRejection(serverId, err, 'connect');
    }
    const byRow = connectorRefusal(serverId, entry, rows);
    if (byRow) throw this.refuse(byRow);
    const protocol = this.config.protocol ?? 'auto';
    const ladder = this.ladder();
    const client = new Client(this.opts.clientInfo ?? { name: 'mhs-host', version: '0.1.0' }, {
      versionNegotiation: {
        mode: protocol === 'modern' ? { pin: MCP_MODERN_REVISION } : protocol,
      },
      // interop.md §The floor: the SDK offers and accepts only the rungs at or above minimumRevision.
      supportedProtocolVersions: ladder.revisions,
    });
    const built = buildTransport(entry, this.opts);
    const transport = this.opts._transport ? this.opts._transport(serverId, built) : built;
    const offered = watchInitializeOffer(transport);
    const timeout = this.config.requestTimeoutMs ?? 60_000;
    const decided = (d: Omit<NegotiationDecided, 'protocol' | 'floor' | 'peerDigest' | 'at'>): NegotiationDecided => ({
      protocol: 'mcp',
      ...d,
      floor: ladder.minimumRevision,
      peerDigest: peerDigestOf(entry),
      at: (this.opts.now?.() ?? new Date()).toISOString(),
    });
    // A decision that cannot be recorded (the opening run ended meanwhile) fails the connect: retried by the next call.
    const note = async (d: NegotiationDecided): Promise<void> => {
      try {
        await record?.(d);
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        throw toMcpRejection(
          serverId,
          new Error(`the negotiation could not be recorded: ${why}`, { cause: err }),
          'connect',
        );
      }
    };
    // What the host asks for first: the modern revision by server/discover, else its top `initialize` rung.
    const initializeRung = ladder.revisions.find((r) => r < MCP_MODERN_REVISION) ?? ladder.preferredVersion;
    try {
      await client.connect(transport, { timeout });
    } catch (err) {
      await client.close().catch(() => undefined);
      const refusal = refusalOf(serverId, err, offered(), ladder);
      if (refusal) {
        await note(
          decided({ outcome: 'refused', requested: refusal.requested ?? initializeRung, reason: refusal.reason }),
        );
        throw refusal.error ?? unsupported(serverId, offered(), ladder);
      }
      throw toMcpRejection(serverId, err, 'connect');
    }
    const version = client.getNegotiatedProtocolVersion();
    const requested = client.getProtocolEra() === 'modern' ? MCP_MODERN_REVISION : initializeRung;
    try {
      if (version === undefined || !ladder.revisions.includes(version)) {
        await note(
          decided({
            outcome: 'refused',
            requested,
            reason:
              version !== undefined && belowFloor(version, ladder.minimumRevision)
                ? 'below-floor'
                : 'unsupported-revision',
          }),
        );
        throw unsupported(serverId, version, ladder);
      }
      await note(decided({ outcome: 'accepted', requested, version }));
      // HOST-020: what the server serves decides, before any tools/call can be sent.
      await assertNotMhsEndpoint(client, serverId, timeout);
    } catch (err) {
      await client.close().catch(() => undefined);
      if (err instanceof HostError && err.code === ErrorCode.INTEROP_VERSION_UNSUPPORTED) throw err;
      throw isMhsEndpointRefusal(err) ? this.refuse(err) : toMcpRejection(serverId, err, 'connect');
    }
    const mine = this.clients.get(serverId);
    // A stdio child that exits (or a transport that closes) drops the client; the next call reconnects.
    client.onclose = () => {
      if (this.clients.get(serverId) === mine) this.clients.delete(serverId);
    };
    return client;
  }

  /**
   * Sends one request and returns the result as the SDK decoded it (no aggregation, no cache). Rejects
   * `not_found`, `mcp_error` or `mcp_transport_error`; a failure of the connection itself drops it (reopened on
   * the next call).
   */
  async request(
    serverId: string,
    method: McpMethod,
    params: Record<string, unknown>,
    signal?: AbortSignal,
    record?: NegotiationRecorder,
  ): Promise<Record<string, unknown>> {
    this.entry(serverId);
    try {
      refuseMhsRequest(serverId, method, params);
    } catch (err) {
      this.opts.onRefused?.(err as HostError);
      throw err;
    }
    const client = await this.client(serverId, record);
    let result: Record<string, unknown>;
    try {
      signal?.throwIfAborted();
      const opts = { timeout: this.config.requestTimeoutMs ?? 60_000, ...(signal ? { signal } : {}) };
      result = (await client.request({ method, params }, opts)) as Record<string, unknown>;
    } catch (err) {
      const rejection = toMcpRejection(serverId, err, 'request');
      // A caller's cancellation, a slow tool or an odd reply says nothing about the connection (others may use it).
      const sdkCode = rejection.details.sdkCode as SdkErrorCode | undefined;
      if (rejection.code === ErrorCode.MCP_TRANSPORT && !signal?.aborted && !(sdkCode && KEEPS_CONNECTION.has(sdkCode)))
        await this.drop(serverId);
      throw rejection;
    }
    // A server whose tool list turns into the MHS projection after connect is refused from then on.
    const late = mhsRefusalOfResult(serverId, method, result);
    if (late) {
      await this.drop(serverId);
      throw this.refuse(late);
    }
    return result;
  }

  /** Remembers and reports an MHS-endpoint refusal (once per server); returns it for throwing. */
  private refuse(err: HostError): HostError {
    const serverId = String(err.details.serverId);
    if (!this.refused.has(serverId)) {
      this.refused.set(serverId, err);
      this.opts.onRefused?.(err);
    }
    return err;
  }

  /** The negotiated revision of an open connection (undefined when none is open). */
  async revision(serverId: string): Promise<string | undefined> {
    const p = this.clients.get(serverId);
    if (!p) return undefined;
    try {
      return (await p).getNegotiatedProtocolVersion();
    } catch {
      return undefined;
    }
  }

  /** Closes and forgets the connection of one server. */
  async drop(serverId: string): Promise<void> {
    const p = this.clients.get(serverId);
    this.clients.delete(serverId);
    if (p) await p.then((c) => c.close()).catch(() => undefined);
  }

  /** Closes every connection (stdio children exit); later calls reject `mcp_transport_error`. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.clients.keys()].map((id) => this.drop(id)));
  }
}
