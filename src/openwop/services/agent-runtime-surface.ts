/**
 * `ctx.agentRuntime` (RFC 0144 §agentRuntime; host-capabilities.md §host.agentRuntime): spawn, delegate,
 * consensus and messageSend. Every call is recorded in the run's event log under its idempotency key, so a
 * resumed or replayed node gets the recorded result instead of acting again.
 */

/** An AgentRef (agent-ref.schema.json): `agentId` plus optional identity fields. */
export interface AgentRefLike {
  agentId: string;
  name?: string;
  modelClass?: string;
  [k: string]: unknown;
}

/** The `ctx.agentRuntime` surface. Rejections are `NodeFailure`s (`agent_not_found`, ...). */
export interface AgentRuntimeSurface {
  spawn(request: {
    manifestId?: string;
    agentRef?: AgentRefLike;
    config?: Record<string, unknown>;
    idempotencyKey: string;
  }): Promise<{ agentInstanceId: string; spawnedAt: string }>;
  delegate(request: {
    task: string;
    agents: AgentRefLike[];
    strategy?: 'best-match' | 'load-balanced';
    escalationThreshold?: number;
    idempotencyKey: string;
  }): Promise<{ selectedAgentId: string; delegationId: string; escalated?: boolean; confidence?: number }>;
  consensus(request: {
    proposal: Record<string, unknown>;
    participants: AgentRefLike[];
    threshold?: number;
    maxRounds?: number;
    idempotencyKey: string;
  }): Promise<{ converged: boolean; rounds: number; agreement?: unknown; votes?: Record<string, unknown> }>;
  messageSend(request: {
    fromAgentId: string;
    toAgentId: string;
    channel: string;
    content: unknown;
    idempotencyKey: string;
  }): Promise<{ messageId: string; sentAt: string }>;
}
