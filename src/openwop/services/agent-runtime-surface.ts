/** `ctx.agentRuntime` (RFC 0144 §agentRuntime): spawn, delegate, consensus and messageSend. */
export interface AgentRuntimeSurface {
  spawn(request: Record<string, unknown>): Promise<Record<string, unknown>>;
  delegate(request: Record<string, unknown>): Promise<Record<string, unknown>>;
  consensus(request: Record<string, unknown>): Promise<Record<string, unknown>>;
  messageSend(request: Record<string, unknown>): Promise<Record<string, unknown>>;
}
