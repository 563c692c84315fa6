/**
 * What the engine needs from a connected MHS endpoint. Implemented by the MCP connector
 * (`connector.ts`); the engine never sees MCP types.
 */
export interface ToolCallResult {
  isError: boolean;
  /** The MHS object (receipt, session, profile...) or `{error: MhsWireError}` when `isError`. */
  structuredContent: Record<string, unknown>;
}

export interface CallOptions {
  /** Transport timeout for this call; the MHS `deadline_ms` sent must be shorter (HOST-037). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** MCP request `_meta`, e.g. `{traceparent, tracestate}`. */
  meta?: Record<string, string>;
}

export interface EndpointConnection {
  readonly endpointId: string;
  /** The MCP revision negotiated: `2026-07-28` when offered, else `2025-11-25`. */
  readonly protocolVersion: string;
  /**
   * Calls a tool. Rejects with HostError: `MHS.TRANSPORT.TIMEOUT_PRESEND` (nothing left the host),
   * `MHS.TRANSPORT.TIMEOUT_POSTSEND` (sent, no answer in time), `MHS.TRANSPORT.DISCONNECTED`,
   * `MHS.TRANSPORT.FRAME_TOO_LARGE`. Fault results (`isError: true`) resolve, they do not reject.
   */
  callTool(name: string, args: Record<string, unknown>, opts?: CallOptions): Promise<ToolCallResult>;
  listTools(): Promise<Array<{ name: string; inputSchema: Record<string, unknown>; description?: string }>>;
  /** Resolves when the transport dies (child exit, socket close). */
  readonly closed: Promise<{ code: string; reason: string }>;
  close(): Promise<void>;
}
