import { NodeFailure } from '../node-registry.js';
import type { NodeContext } from '../node-registry.js';

/** Default escalation threshold of `agent.decided.confidence` (RFC 0002 §F, CP-1): below it the node suspends. */
export const DEFAULT_ESCALATION_THRESHOLD = 0.7;

/** Spec floor of `OrchestratorDecision.confidence` (RFC 0039 §A, executionModel version >= 2). */
export const SPEC_CONFIDENCE_FLOOR = 0.5;

/**
 * The resolved escalation threshold of a node: `RunOptions.configurable.escalationThreshold` (per run), then the
 * node's `config.escalationThreshold` (host extension), then the spec default 0.7; values outside [0, 1] are ignored.
 */
export function escalationThreshold(ctx: Pick<NodeContext, 'configurable' | 'node'>): number {
  for (const t of [ctx.configurable?.escalationThreshold, ctx.node.config.escalationThreshold]) {
    if (typeof t === 'number' && t >= 0 && t <= 1) return t;
  }
  return DEFAULT_ESCALATION_THRESHOLD;
}

/** True when a stated confidence is below the threshold (an absent confidence never escalates). */
export function belowThreshold(confidence: number | undefined, threshold: number): boolean {
  return typeof confidence === 'number' && confidence < threshold;
}

/**
 * The CP-1 conservative path: suspends the node with `node.suspended {reason: 'low-confidence'}` on an
 * approval interrupt (run `waiting-approval`), resolvable through `POST /v1/runs/{runId}/interrupts/{nodeId}`.
 * `accept` ratifies the decision and returns; `reject` or a timeout fails the node `approval_rejected`.
 * Durable: after a restart the same interrupt is found again by its key, and a recorded resolution is reused.
 */
export async function lowConfidenceGate(
  ctx: NodeContext,
  o: { agentId: string; observed: number; threshold: number; decision?: unknown },
): Promise<{ decidedBy: string | null; causationId: string }> {
  const sketch = { agentId: o.agentId, threshold: o.threshold, observed: o.observed };
  const outcome = await ctx.interrupt({
    kind: 'approval',
    data: {
      artifactId: `${ctx.runId}:${ctx.node.id}:decision`,
      artifactType: 'agent-decision',
      title: `Low-confidence decision by ${o.agentId}`,
      actions: ['accept', 'reject'],
      artifactData: { ...sketch, ...(o.decision !== undefined ? { decision: o.decision } : {}) },
    },
    suspendInfo: { reason: 'low-confidence', ...sketch },
  });
  if (outcome.timedOut) {
    throw new NodeFailure('approval_rejected', 'the low-confidence decision was not ratified in time', {
      reason: 'timeout',
    });
  }
  if (outcome.resumeValue.action === 'reject') {
    throw new NodeFailure(
      'approval_rejected',
      'the low-confidence decision was rejected',
      { decidedBy: outcome.decidedBy, reason: 'low-confidence' },
      { decision: 'rejected' },
    );
  }
  return { decidedBy: outcome.decidedBy, causationId: outcome.causationId };
}
