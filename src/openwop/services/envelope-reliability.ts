/**
 * The envelope-reliability events of a retried or given-up generation (RFC 0032 §B.1-2, RFC 0033 §B-C):
 * `envelope.retry.attempted` before each retry past the first, `envelope.retry.exhausted` once when the budget is
 * spent, and the truncation give-up (`cap.breached {kind: schema}`, `envelope_truncation_unrecoverable`). Diagnostic
 * text is host-authored from validator output, never a substring of the model's answer.
 */
import { ErrorCode } from '../../core/index.js';
import { emitOnce } from '../agents/emit-once.js';
import { NodeFailure } from '../node-registry.js';
import type { NodeContext } from '../node-registry.js';
import type { SchemaIssue } from '../schemas.js';
import type { RunEventInput } from '../types.js';

/** Why an attempt failed (run-event-payloads.schema.json `envelopeRetryAttempted.reason`). */
export type RetryReason = 'schema-violation' | 'truncation' | 'type-mismatch' | 'parse-error' | 'refusal';

/** The budget multiplier of a truncation retry (advertised as `truncationBudgetMultiplier`). */
export const TRUNCATION_MULTIPLIER = 2;

/** The events the host emits of the family (advertised under `envelopes.reliability.events`). */
export const RELIABILITY_EVENTS = [
  'envelope.retry.attempted',
  'envelope.retry.exhausted',
  'envelope.refusal',
  'envelope.truncated',
] as const;

/** `capabilities.envelopes.reliability` of a host whose generations follow this module. */
export function reliabilityCapability(schemaRounds: number): Record<string, unknown> {
  return {
    envelopes: {
      reliability: {
        supported: true,
        events: [...RELIABILITY_EVENTS],
        ...(schemaRounds >= 1 ? { maxRetryAttempts: Math.min(16, schemaRounds) } : {}),
        completion: { distinguishesTruncation: true, truncationBudgetMultiplier: TRUNCATION_MULTIPLIER },
      },
    },
  };
}

/** The first validator issues as one line (paths and ajv messages only). */
export function issueText(issues: readonly SchemaIssue[]): string {
  return issues
    .slice(0, 3)
    .map((i) => `${i.path} ${i.message}`)
    .join('; ');
}

/** `envelope.retry.attempted` of attempt `attempt` (2 for the first retry). */
export function attempted(
  ctx: NodeContext,
  attempt: number,
  reason: RetryReason,
  previousError: string | null,
): RunEventInput {
  return {
    type: 'envelope.retry.attempted',
    payload: { nodeId: ctx.node.id, attempt: Math.min(16, attempt), reason, previousError },
  };
}

/**
 * Emits `envelope.retry.exhausted` once for this node execution (it fails right after); also for a refusal, which is
 * never retried (`totalAttempts` counts the calls made).
 */
export async function exhausted(
  ctx: NodeContext,
  totalAttempts: number,
  finalReason: RetryReason,
  finalError: string | null,
): Promise<void> {
  await emitOnce(ctx, {
    type: 'envelope.retry.exhausted',
    payload: { nodeId: ctx.node.id, totalAttempts, finalReason, finalError },
  });
}

/** `cap.breached {kind: schema}`, then the failure `envelope_truncation_unrecoverable` (RFC 0033 §B). */
export async function breachTruncation(
  ctx: NodeContext,
  limit: number,
  observed: number,
  envelopeType: string,
): Promise<NodeFailure> {
  await emitOnce(ctx, {
    type: 'cap.breached',
    payload: { kind: 'schema', limit, observed, nodeId: ctx.node.id },
  });
  return new NodeFailure(
    ErrorCode.ENVELOPE_TRUNCATION_UNRECOVERABLE,
    `every answer was cut off by the token budget (${observed} attempts)`,
    { envelopeType, rounds: observed },
  );
}
