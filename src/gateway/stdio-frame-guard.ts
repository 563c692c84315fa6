/**
 * The gateway's stdio input guard. An inbound message over 4 MiB (HOST-063) is never handed to the server: a
 * request gets a JSON-RPC error naming the limit (`MHS.LIMIT.FRAME`). A line that is not JSON is
 * skipped as the SDK's stdio binding does; JSON that is not JSON-RPC gets `Invalid Request` (id null). Either way the connection keeps serving.
 */
import type { JSONRPCMessage, Transport, TransportSendOptions } from '@modelcontextprotocol/server';
import { ErrorCode } from '../core/index.js';

/** Common MCP clients use 4 MiB frames (HOST-063). */
export const GATEWAY_MAX_FRAME_BYTES = 4 * 1024 * 1024;
/** JSON-RPC "Invalid Request": the frame is refused whole. */
const INVALID_REQUEST = -32600;

/** Wraps the stdio server transport; see the module comment. */
export class InboundFrameGuard implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];

  constructor(
    private readonly inner: Transport,
    private readonly maxFrameBytes = GATEWAY_MAX_FRAME_BYTES,
  ) {
    inner.onclose = () => this.onclose?.();
    inner.onerror = (e) => {
      // The SDK's read buffer skips lines that are not JSON and reports JSON that is not JSON-RPC, then goes on
      // reading: the sender of the latter is owed an answer.
      if (e?.name === 'ZodError') this.answer(null, INVALID_REQUEST, 'Invalid Request: not a JSON-RPC 2.0 message');
      this.onerror?.(e);
    };
    inner.onmessage = (message, extra) => this.receive(message, extra);
  }

  start(): Promise<void> {
    return this.inner.start();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.inner.send(message, options);
  }

  private receive(message: JSONRPCMessage, extra?: Parameters<NonNullable<Transport['onmessage']>>[1]): void {
    const bytes = Buffer.byteLength(JSON.stringify(message), 'utf8');
    if (bytes <= this.maxFrameBytes) {
      this.onmessage?.(message, extra);
      return;
    }
    const m = message as { id?: string | number; method?: string };
    this.onerror?.(new Error(`refused an inbound ${bytes}-byte frame over the ${this.maxFrameBytes}-byte limit`));
    if (m.id === undefined || m.method === undefined) return;
    this.answer(m.id, INVALID_REQUEST, `request of ${bytes} bytes exceeds the ${this.maxFrameBytes}-byte frame limit`, {
      mhs_code: ErrorCode.LIMIT_FRAME,
      bytes,
      limit: this.maxFrameBytes,
    });
  }

  private answer(id: string | number | null, code: number, message: string, data?: Record<string, unknown>): void {
    const error = { code, message, ...(data ? { data } : {}) };
    void this.inner
      .send({ jsonrpc: '2.0', id, error } as unknown as JSONRPCMessage)
      .catch((e: unknown) => this.onerror?.(e as Error));
  }
}
