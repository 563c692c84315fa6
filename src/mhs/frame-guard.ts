/**
 * A transport wrapper that (a) refuses inbound frames over the host's frame limit instead of
 * passing or truncating them (HOST-063) and (b) records which tracked requests were handed to the
 * wire, so a timeout can be classified pre-send or post-send (wire contract §8).
 */
import type { JSONRPCMessage, Transport, TransportSendOptions } from '@modelcontextprotocol/client';

/** The host's frame limit: common MCP clients use 4 MiB frames (HOST-063). */
export const MAX_FRAME_BYTES = 4 * 1024 * 1024;

/** `_meta` key carrying the host's per-call tracking token. */
export const CALL_TOKEN_META_KEY = 'io.mhs-host/call';

/** JSON-RPC error code the guard substitutes for an oversized reply (implementation-defined range). */
export const FRAME_TOO_LARGE_RPC_CODE = -32099;

type Id = string | number;

/** The JSON-RPC error that stands in for a reply over the frame limit (settles the request, never truncates it). */
export function frameTooLargeReply(id: Id, bytes: number, limit: number): JSONRPCMessage {
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: FRAME_TOO_LARGE_RPC_CODE,
      message: `reply of ${bytes} bytes exceeds the ${limit}-byte frame limit`,
      data: { bytes, limit },
    },
  } as JSONRPCMessage;
}

/**
 * The SDK's stdio read buffer refuses a line past its `maxBufferSize` with this error, clears itself and closes
 * the transport (the child is stopped): the pipe cannot be resynchronised inside an over-long line.
 */
const READ_BUFFER_OVERFLOW = /ReadBuffer exceeded maximum size/;

/** Wraps a transport; see the module comment. */
export class FrameGuardTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];
  private readonly sentTokens = new Set<string>();
  private readonly tokenById = new Map<Id, string>();
  private readonly oversized = new Map<string, number>();
  /** Size of the largest frame refused, for diagnostics. */
  lastRefusedBytes = 0;

  constructor(
    readonly inner: Transport,
    private readonly maxFrameBytes = MAX_FRAME_BYTES,
  ) {
    inner.onclose = () => this.onclose?.();
    inner.onerror = (e) => {
      if (READ_BUFFER_OVERFLOW.test(e.message)) this.refuseInFlight();
      this.onerror?.(e);
    };
    inner.onmessage = (message, extra) => this.receive(message, extra);
  }

  get hasPerRequestStream(): boolean | undefined {
    return this.inner.hasPerRequestStream;
  }
  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }
  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }
  setSupportedProtocolVersions(versions: string[]): void {
    this.inner.setSupportedProtocolVersions?.(versions);
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const m = message as { id?: Id; method?: string; params?: { _meta?: Record<string, unknown> } };
    const token = m.params?._meta?.[CALL_TOKEN_META_KEY];
    // Marked before the write starts: anything handed to the transport may have reached the endpoint.
    if (typeof token === 'string' && m.id !== undefined && m.method) {
      this.sentTokens.add(token);
      this.tokenById.set(m.id, token);
    }
    return this.inner.send(message, options);
  }

  /** True once the request carrying `token` was handed to the transport. */
  wasSent(token: string): boolean {
    return this.sentTokens.has(token);
  }

  /** The refused size of the reply to `token`'s request, if it was refused. */
  takeOversized(token: string): number | undefined {
    const n = this.oversized.get(token);
    this.oversized.delete(token);
    return n;
  }

  /** Forgets a finished call's token. */
  forget(token: string): void {
    this.sentTokens.delete(token);
    this.oversized.delete(token);
  }

  /**
   * A stdio line passed the read buffer (HOST-063, issue 16): which reply it was is unknowable, and the SDK
   * closes the pipe, so every tracked call in flight is refused as over the limit now (post-send: outcome unknown).
   */
  private refuseInFlight(): void {
    const bytes = this.maxFrameBytes + 1;
    this.lastRefusedBytes = bytes;
    for (const [id, token] of [...this.tokenById]) {
      this.tokenById.delete(id);
      this.oversized.set(token, bytes);
      this.onmessage?.(frameTooLargeReply(id, bytes, this.maxFrameBytes));
    }
  }

  private receive(message: JSONRPCMessage, extra?: Parameters<NonNullable<Transport['onmessage']>>[1]): void {
    const m = message as { id?: Id; method?: string; result?: unknown; error?: unknown };
    const isResponse = m.id !== undefined && m.method === undefined;
    const token = isResponse ? this.tokenById.get(m.id as Id) : undefined;
    if (isResponse) this.tokenById.delete(m.id as Id);
    const bytes = Buffer.byteLength(JSON.stringify(message), 'utf8');
    if (bytes <= this.maxFrameBytes) {
      this.onmessage?.(message, extra);
      return;
    }
    this.lastRefusedBytes = bytes;
    if (token) this.oversized.set(token, bytes);
    if (isResponse) {
      // Settle the pending request with an error instead of delivering a frame the host refuses.
      this.onmessage?.(frameTooLargeReply(m.id as Id, bytes, this.maxFrameBytes), extra);
    } else {
      this.onerror?.(new Error(`dropped an inbound ${bytes}-byte frame over the ${this.maxFrameBytes}-byte limit`));
    }
  }
}
