/**
 * The MCP connector: an ordinary MCP v2 client (HOST-060/061) over a stdio child process or
 * Streamable HTTP, implementing `EndpointConnection`. It never branches on device family or
 * vendor (HOST-020): everything device-specific comes from the manifest.
 */
import { Client, SdkError, SdkErrorCode, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { FetchLike, Transport } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { ErrorCode, HostError, RealClock, toHostError } from '../core/index.js';
import type { Clock } from '../core/index.js';
import type { CallOptions, EndpointConnection, ToolCallResult } from './connection.js';
import type { ConnectorRow, EndpointAuth } from './connector-row.js';
import { CALL_TOKEN_META_KEY, FRAME_TOO_LARGE_RPC_CODE, FrameGuardTransport, MAX_FRAME_BYTES } from './frame-guard.js';
import { frameLimitedFetch } from './frame-limited-fetch.js';
import { admitManifest } from './manifest.js';
import type { Manifest, EndpointDescriptor } from './wire-types.js';

/** MCP revisions the host speaks: the stateless one when offered, else the initialize one. */
export const MODERN_REVISION = '2026-07-28';
export const LEGACY_REVISION = '2025-11-25';

/** Options of {@link connect}. */
export interface ConnectOptions {
  clock?: Clock;
  /** Deadline for the handshake and the manifest fetch (a stdio child starts inside it). Default 30 000 ms. */
  timeoutMs?: number;
  /** Default timeout of a call without `timeoutMs`. Default 30 000 ms. */
  callTimeoutMs?: number;
  /** `auto` (default): `2026-07-28` when offered, else `2025-11-25`. `legacy` / `modern` force one. */
  protocol?: 'auto' | 'legacy' | 'modern';
  /** Inbound frame limit. Default 4 MiB (HOST-063). */
  maxFrameBytes?: number;
  /** Descriptor that announced the endpoint: its digest and claim are checked (HOST-073). */
  descriptor?: EndpointDescriptor | null;
  /** Skip the descriptor digest comparison (reconnects, where a changed manifest is expected and reported). */
  ignoreDescriptorDigest?: boolean;
  /** Extra environment for a stdio child (on top of the SDK's safe default environment). */
  env?: Record<string, string>;
  cwd?: string;
  /** stdio child stderr: `capture` (default) keeps its last 4 KiB for diagnostics (`stderrTail`). */
  stderr?: 'capture' | 'ignore' | 'inherit';
  /** http: fetch to use (tests route it to an in-process handler). */
  fetch?: FetchLike;
  /** A ready transport or a factory of them (in-process tests; reconnects need a factory); bypasses stdio/http. */
  transport?: Transport | (() => Transport);
  /** A second, live enablement check (HOST-068) consulted with `row.enabled`. */
  isEnabled?: (connectorId: string) => boolean | Promise<boolean>;
  /** Environment for resolving `auth.token_env`. Default `process.env`. */
  secrets?: Record<string, string | undefined>;
  /**
   * HTTP: treat a refused or failed TCP connect as the end of this connection (`closed` resolves), so a
   * reconnecting wrapper takes over. Default false: a plain HTTP connection outlives a server restart.
   */
  closeOnUnreachable?: boolean;
}

/** A connected, admitted endpoint. */
export interface MhsConnection extends EndpointConnection {
  readonly connectorId: string;
  readonly transportKind: 'stdio' | 'http' | 'custom';
  /** The admitted manifest (HOST-073). */
  readonly manifest: Manifest;
  /** `local` for stdio children (HOST-011), else the row's scheme. */
  readonly auth: EndpointAuth['scheme'];
  /** Child process id of a stdio endpoint. */
  readonly pid: number | null;
  /** The last 4 KiB a stdio child wrote to stderr (empty for other transports). */
  stderrTail(): string;
  /** Fetches and admits the manifest again; `changed` when its digest differs (HOST-012). */
  refreshManifest(): Promise<{ manifest: Manifest; changed: boolean; previousDigest: string }>;
}

let callSeq = 0;

function bearerToken(auth: EndpointAuth, secrets: Record<string, string | undefined>, id: string): string | undefined {
  if (auth.scheme !== 'bearer') return undefined;
  const token = auth.token ?? (auth.token_env ? secrets[auth.token_env] : undefined);
  if (!token)
    throw new HostError(
      ErrorCode.AUTH_ENDPOINT_UNTRUSTED,
      `connector ${id} needs a bearer token and none is configured`,
      { connector_id: id },
      { remediation: 'Set auth.token or auth.token_env for this endpoint in endpoints.json.' },
    );
  return token;
}

/**
 * Slack of the stdio read buffer over the frame limit: one pipe read may carry the end of a frame and the start of
 * the next, so frames up to the limit always fit and reach the guard, which refuses those over it whole.
 */
const STDIO_READ_SLACK = 1024 * 1024;

function buildTransport(
  row: ConnectorRow,
  opts: ConnectOptions,
  maxFrameBytes: number,
): { transport: Transport; kind: MhsConnection['transportKind'] } {
  if (opts.transport)
    return { transport: typeof opts.transport === 'function' ? opts.transport() : opts.transport, kind: 'custom' };
  if (row.transport === 'stdio') {
    const [command, ...args] = row.command ?? [];
    if (!command)
      throw new HostError(ErrorCode.HOST_CONFIG_INVALID, `connector ${row.connector_id} has no command`, {
        connector_id: row.connector_id,
      });
    return {
      kind: 'stdio',
      transport: new StdioClientTransport({
        command,
        args,
        env: { ...getDefaultEnvironment(), ...opts.env },
        ...(opts.cwd ? { cwd: opts.cwd } : {}),
        stderr: (opts.stderr ?? 'capture') === 'capture' ? 'pipe' : (opts.stderr as 'ignore' | 'inherit'),
        // Bounded while reading (HOST-063, issue 16): a longer line overflows the SDK's buffer, which closes the
        // pipe; the guard refuses the calls in flight as over the limit.
        maxBufferSize: maxFrameBytes + STDIO_READ_SLACK,
      }),
    };
  }
  if (!row.url)
    throw new HostError(ErrorCode.HOST_CONFIG_INVALID, `connector ${row.connector_id} has no url`, {
      connector_id: row.connector_id,
    });
  const token = bearerToken(row.auth, opts.secrets ?? process.env, row.connector_id);
  return {
    kind: 'http',
    transport: new StreamableHTTPClientTransport(new URL(row.url), {
      // Per-endpoint credential (HOST-011): this transport's own header, never a shared provider.
      ...(token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : {}),
      // Every response body is read under the frame limit, JSON or SSE (HOST-063, issue 16).
      fetch: frameLimitedFetch(opts.fetch ?? ((url, init) => fetch(url, init)), maxFrameBytes),
    }),
  };
}

/**
 * Connects to the endpoint of a connector row and admits its manifest.
 *
 * Refuses, before any process is spawned or socket opened, when the row (or `opts.isEnabled`)
 * says disabled: `MHS.HOST.CONNECTOR_DISABLED` (HOST-068). Then negotiates the MCP revision,
 * fetches the manifest with `mhs__inspect` and admits it (HOST-073: `MHS.HOST.MANIFEST_INVALID`,
 * `MHS.HOST.DISCLOSURE_UNRENDERABLE`, `MHS.AUTH.ENDPOINT_UNTRUSTED`); on refusal the transport is
 * closed again. Handshake failures and a handshake not done within `timeoutMs`:
 * `MHS.TRANSPORT.DISCONNECTED`; a manifest fetch without answer: `MHS.TRANSPORT.TIMEOUT_POSTSEND`.
 */
export async function connect(row: ConnectorRow, opts: ConnectOptions = {}): Promise<MhsConnection> {
  const enabled = row.enabled && (opts.isEnabled ? await opts.isEnabled(row.connector_id) : true);
  if (!enabled)
    throw new HostError(
      ErrorCode.HOST_CONNECTOR_DISABLED,
      `connector ${row.connector_id} is disabled`,
      { connector_id: row.connector_id },
      { remediation: `An operator enables it with: mhs-host endpoints enable ${row.connector_id}` },
    );
  const clock = opts.clock ?? new RealClock();
  const maxFrameBytes = Math.min(opts.maxFrameBytes ?? MAX_FRAME_BYTES, MAX_FRAME_BYTES);
  const { transport, kind } = buildTransport(row, opts, maxFrameBytes);
  const guard = new FrameGuardTransport(transport, maxFrameBytes);
  const protocol = opts.protocol ?? 'auto';
  const client = new Client(
    { name: 'mhs-host', version: '0.1.0' },
    {
      versionNegotiation: {
        mode: protocol === 'auto' ? 'auto' : protocol === 'modern' ? { pin: MODERN_REVISION } : 'legacy',
      },
    },
  );
  const conn = new McpConnection(row, client, guard, kind, clock, opts);
  let handshakeDone = false;
  try {
    await withDeadline(clock, opts.timeoutMs ?? 30_000, (signal) =>
      client.connect(guard, { signal, timeout: 0x7fffffff }),
    );
    handshakeDone = true;
    await conn.refreshManifest();
    return conn;
  } catch (err) {
    await conn.close().catch(() => undefined);
    // The probe runs in place on our wrapped stdio transport; a legacy child that exits on the
    // unknown `server/discover` probe gets one fresh child with the plain initialize handshake.
    if (!handshakeDone && protocol === 'auto' && kind === 'stdio' && !(err instanceof HostError))
      return connect(row, { ...opts, protocol: 'legacy' });
    const e = toHostError(err, ErrorCode.TRANSPORT_DISCONNECTED);
    if (e.code === ErrorCode.TRANSPORT_DISCONNECTED && !(err instanceof HostError))
      throw new HostError(
        ErrorCode.TRANSPORT_DISCONNECTED,
        `could not connect to ${row.connector_id}: ${e.message}`,
        { connector_id: row.connector_id },
        { cause: err, remediation: 'Check that the endpoint is running and reachable.' },
      );
    throw e;
  }
}

/** Runs the handshake under a deadline; a handshake that does not finish is a failed connection, not a command timeout. */
async function withDeadline<T>(clock: Clock, ms: number, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ac = new AbortController();
  const h = clock.setTimeout(
    () =>
      ac.abort(
        new HostError(ErrorCode.TRANSPORT_DISCONNECTED, `the endpoint did not complete the handshake within ${ms} ms`, {
          reason: 'handshake_timeout',
          timeout_ms: ms,
        }),
      ),
    ms,
  );
  try {
    return await fn(ac.signal);
  } catch (err) {
    if (ac.signal.aborted) throw ac.signal.reason;
    throw err;
  } finally {
    clock.clearTimeout(h);
  }
}

class McpConnection implements MhsConnection {
  readonly closed: Promise<{ code: string; reason: string }>;
  private resolveClosed!: (v: { code: string; reason: string }) => void;
  private isClosed = false;
  private lastError = '';
  private _manifest: Manifest | undefined;
  private endpointKnown: string | null;
  private stderrBuf = '';

  constructor(
    private readonly row: ConnectorRow,
    private readonly client: Client,
    private readonly guard: FrameGuardTransport,
    readonly transportKind: MhsConnection['transportKind'],
    private readonly clock: Clock,
    private readonly opts: ConnectOptions,
  ) {
    this.endpointKnown = row.endpoint_id;
    this.closed = new Promise((r) => (this.resolveClosed = r));
    client.onclose = () => {
      const tail = this.stderrTail().trim().split('\n').at(-1) ?? '';
      this.markClosed([this.lastError || 'transport closed', tail && `stderr: ${tail}`].filter(Boolean).join('; '));
    };
    const inner = guard.inner;
    if (inner instanceof StdioClientTransport && inner.stderr) {
      inner.stderr.on('data', (chunk: Buffer | string) => {
        this.stderrBuf = (this.stderrBuf + chunk.toString()).slice(-4096);
      });
    }
    client.onerror = (e) => {
      this.lastError = e.message;
    };
  }

  stderrTail(): string {
    return this.stderrBuf;
  }
  get endpointId(): string {
    return this.endpointKnown ?? '';
  }
  get connectorId(): string {
    return this.row.connector_id;
  }
  get auth(): EndpointAuth['scheme'] {
    return this.transportKind === 'stdio' ? 'local' : this.row.auth.scheme;
  }
  get pid(): number | null {
    const inner = this.guard.inner;
    return inner instanceof StdioClientTransport ? inner.pid : null;
  }
  get protocolVersion(): string {
    return this.client.getNegotiatedProtocolVersion() ?? '';
  }
  get manifest(): Manifest {
    if (!this._manifest) throw new HostError(ErrorCode.HOST_INTERNAL, 'manifest not fetched yet');
    return this._manifest;
  }

  private markClosed(reason: string): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.resolveClosed({ code: ErrorCode.TRANSPORT_DISCONNECTED, reason });
  }

  async refreshManifest(): Promise<{ manifest: Manifest; changed: boolean; previousDigest: string }> {
    const previous = this._manifest;
    const r = await this.callTool('mhs__inspect', {}, { timeoutMs: this.opts.timeoutMs ?? 30_000 });
    if (r.isError) {
      const wire = (r.structuredContent as { error?: { mhs_code?: string; message?: string } }).error;
      throw new HostError(
        ErrorCode.HOST_MANIFEST_INVALID,
        `mhs__inspect failed on ${this.row.connector_id}: ${wire?.mhs_code ?? ''} ${wire?.message ?? ''}`,
        { connector_id: this.row.connector_id, error: wire ?? null },
      );
    }
    const manifest = admitManifest(r.structuredContent, {
      source: this.row.connector_id,
      ...(this.opts.descriptor ? { descriptor: this.opts.descriptor } : {}),
      checkDescriptorDigest: this.opts.ignoreDescriptorDigest !== true && previous === undefined,
      ...(this.endpointKnown ? { expectedEndpointId: this.endpointKnown } : {}),
    });
    const previousDigest = previous?.manifest_digest ?? '';
    this._manifest = manifest;
    this.endpointKnown = manifest.endpoint_id;
    return { manifest, changed: previousDigest !== '' && previousDigest !== manifest.manifest_digest, previousDigest };
  }

  async listTools(): Promise<Array<{ name: string; inputSchema: Record<string, unknown>; description?: string }>> {
    if (this.isClosed) throw this.disconnected(false);
    try {
      const { tools } = await this.client.listTools();
      return tools.map((t) => ({
        name: t.name,
        inputSchema: t.inputSchema as Record<string, unknown>,
        ...(t.description !== undefined ? { description: t.description } : {}),
      }));
    } catch (err) {
      throw this.mapError(err, '', 'tools/list');
    }
  }

  async callTool(name: string, args: Record<string, unknown>, opts: CallOptions = {}): Promise<ToolCallResult> {
    const token = `c${++callSeq}`;
    if (this.isClosed) throw this.disconnected(false, name);
    const timeoutMs = opts.timeoutMs ?? this.opts.callTimeoutMs ?? 30_000;
    const ac = new AbortController();
    let timedOut = false;
    const timer = this.clock.setTimeout(() => {
      timedOut = true;
      ac.abort();
    }, timeoutMs);
    const onAbort = () => ac.abort();
    if (opts.signal?.aborted) ac.abort();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      if (ac.signal.aborted) throw new HostError(ErrorCode.TRANSPORT_TIMEOUT_PRESEND, 'aborted before send');
      const result = await this.client.callTool(
        { name, arguments: args, _meta: { ...opts.meta, [CALL_TOKEN_META_KEY]: token } },
        { signal: ac.signal, timeout: 0x7fffffff },
      );
      return toToolResult(result as { isError?: boolean; structuredContent?: unknown; content?: unknown });
    } catch (err) {
      if (err instanceof HostError && err.code === ErrorCode.TRANSPORT_TIMEOUT_PRESEND)
        throw new HostError(err.code, `call ${name} aborted before it was sent`, {
          tool: name,
          endpoint_id: this.endpointId,
          aborted: true,
        });
      if (ac.signal.aborted) {
        const sent = this.guard.wasSent(token);
        throw new HostError(
          sent ? ErrorCode.TRANSPORT_TIMEOUT_POSTSEND : ErrorCode.TRANSPORT_TIMEOUT_PRESEND,
          timedOut
            ? `call ${name} got no answer within ${timeoutMs} ms (${sent ? 'sent' : 'never sent'})`
            : `call ${name} aborted by the caller (${sent ? 'sent' : 'never sent'})`,
          { tool: name, endpoint_id: this.endpointId, sent, timeout_ms: timeoutMs, aborted: !timedOut },
        );
      }
      throw this.mapError(err, token, name);
    } finally {
      this.clock.clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      this.guard.forget(token);
    }
  }

  private disconnected(sent: boolean, tool?: string): HostError {
    return new HostError(
      ErrorCode.TRANSPORT_DISCONNECTED,
      `endpoint ${this.endpointId || this.row.connector_id} is disconnected${this.lastError ? `: ${this.lastError}` : ''}`,
      { endpoint_id: this.endpointId, connector_id: this.row.connector_id, sent, ...(tool ? { tool } : {}) },
      { remediation: 'The connection is re-established with backoff; retry when it is back.' },
    );
  }

  private mapError(err: unknown, token: string, tool: string): HostError {
    if (err instanceof HostError) return err;
    const oversized = token ? this.guard.takeOversized(token) : undefined;
    const code = (err as { code?: unknown }).code;
    const cutAt = (err as { data?: { bytes?: unknown } }).data?.bytes;
    if (oversized !== undefined || code === FRAME_TOO_LARGE_RPC_CODE)
      return new HostError(
        ErrorCode.TRANSPORT_FRAME_TOO_LARGE,
        `reply to ${tool} exceeds the frame limit and was refused, not truncated`,
        {
          tool,
          endpoint_id: this.endpointId,
          // Bytes read when refused: a reply cut while reading is at least this long (issue 16).
          bytes: oversized ?? (typeof cutAt === 'number' ? cutAt : this.guard.lastRefusedBytes),
          limit: MAX_FRAME_BYTES,
        },
        { remediation: 'Ask for less data per call (HOST-063).' },
      );
    if (
      this.isClosed ||
      (err instanceof SdkError && (code === SdkErrorCode.ConnectionClosed || code === SdkErrorCode.NotConnected))
    )
      return this.disconnected(token ? this.guard.wasSent(token) : false, tool);
    if (err instanceof SdkError && code === SdkErrorCode.SendFailed) return this.disconnected(false, tool);
    // HTTP: a refused or failed TCP connect sent nothing (a safe retry); a socket lost mid-request is ambiguous.
    const net = this.transportKind === 'http' ? networkFailure(err) : null;
    if (net) {
      this.lastError = net.code;
      const e = this.disconnected(net.connectPhase ? false : token ? this.guard.wasSent(token) : true, tool);
      if (net.connectPhase && this.opts.closeOnUnreachable) {
        this.markClosed(`endpoint unreachable (${net.code})`);
        void this.client.close().catch(() => undefined);
      }
      return e;
    }
    return toHostError(err);
  }

  async close(): Promise<void> {
    this.markClosed('closed by host');
    await this.client.close();
  }
}

/** Socket error codes raised while connecting: nothing reached the endpoint. */
const CONNECT_PHASE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
/** Socket error codes of a connection lost mid-request. */
const LOST_CODES = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

/** A network-level failure of `fetch` (undici puts the socket error in `cause`), or null. */
function networkFailure(err: unknown): { code: string; connectPhase: boolean } | null {
  for (let e = err as { code?: unknown; syscall?: unknown; cause?: unknown } | undefined, i = 0; e && i < 4; i++) {
    const code = typeof e.code === 'string' ? e.code : '';
    if (CONNECT_PHASE_CODES.has(code) || (code && e.syscall === 'connect')) return { code, connectPhase: true };
    if (LOST_CODES.has(code)) return { code, connectPhase: false };
    e = e.cause as typeof e;
  }
  return null;
}

/** Maps an MCP tool result to `ToolCallResult` (wire contract §4: the MHS object is `structuredContent`). */
function toToolResult(r: { isError?: boolean; structuredContent?: unknown; content?: unknown }): ToolCallResult {
  const isError = r.isError === true;
  let sc = r.structuredContent;
  if (sc === undefined && Array.isArray(r.content)) {
    const first = r.content[0] as { type?: string; text?: string } | undefined;
    if (first?.type === 'text' && typeof first.text === 'string') {
      try {
        sc = JSON.parse(first.text);
      } catch {
        sc = undefined;
      }
    }
  }
  if (sc && typeof sc === 'object' && !Array.isArray(sc))
    return { isError, structuredContent: sc as Record<string, unknown> };
  const text = Array.isArray(r.content) ? (r.content[0] as { text?: string } | undefined)?.text : undefined;
  return isError
    ? {
        isError,
        structuredContent: {
          error: {
            mhs_code: ErrorCode.HOST_INTERNAL,
            message: text ?? 'tool error without an MHS error',
            remediation: '',
          },
        },
      }
    : { isError, structuredContent: { value: sc ?? text ?? null } };
}
