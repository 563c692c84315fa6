/**
 * One structured answer from a model (the supervisor's `OrchestratorDecision`, `core.ai.structuredOutput`): asked
 * through the provider's structured output, parsed and checked by the caller; an invalid answer is re-asked with a
 * corrective fragment, a truncated one with twice the budget, a refusal never (the envelope-completion rules of
 * ai-envelope.md, RFC 0033). Each call is recorded (see `recordedCall`), so a resumed node asks nothing again.
 */
import { ErrorCode } from '../../core/index.js';
import { NodeFailure } from '../node-registry.js';
import type { NodeContext } from '../node-registry.js';
import type { RunEventInput } from '../types.js';
import type { EnvelopeModel, EnvelopeModelMessage, EnvelopeOutputFormat } from './ai-envelope-model.js';
import { attempted, breachTruncation, exhausted, TRUNCATION_MULTIPLIER } from './envelope-reliability.js';
import type { RetryReason } from './envelope-reliability.js';
import { modelIds, recordedCall } from './model-call.js';
import { addUsage } from './provider-usage.js';
import type { ModelUsage } from './provider-usage.js';

/** What {@link askStructured} asks. */
export interface StructuredQuestion {
  /** Checkpoint prefix, unique within the node execution. */
  key: string;
  system: string;
  user: string;
  output: EnvelopeOutputFormat;
  /** Retries after an invalid or truncated answer. */
  rounds: number;
  maxTokens?: number;
  /** Problems of a parsed answer, host-authored (never the answer's text); empty when it is valid. */
  check(value: unknown): string[];
  /** The code the node fails with when no answer is valid. */
  invalidCode: string;
}

/** The first output budget when none is configured and the truncated answer reports no usage. */
const DEFAULT_BUDGET = 4096;

function parse(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

/**
 * The first valid answer and the summed usage of the calls.
 * @throws NodeFailure `envelope_refusal`, `envelope_truncation_unrecoverable`, `q.invalidCode`,
 * `provider_unavailable`.
 */
export async function askStructured(
  ctx: NodeContext,
  model: EnvelopeModel,
  q: StructuredQuestion,
): Promise<{ value: unknown; usage?: ModelUsage }> {
  const messages: EnvelopeModelMessage[] = [
    { role: 'system', content: q.system },
    { role: 'user', content: q.user },
  ];
  let usage: ModelUsage | undefined;
  let maxTokens = q.maxTokens;
  let retry: RunEventInput[] = [];
  let failed = 0;
  for (let turn = 0; ; turn++) {
    const call = { messages, output: q.output, ...(maxTokens !== undefined ? { maxTokens } : {}) };
    const a = await recordedCall(ctx, model, `${q.key}:turn:${turn}`, call, retry);
    usage = addUsage(usage, a.usage);
    if (a.finish === 'refusal') {
      await exhausted(ctx, turn + 1, 'refusal', 'the provider refused the call');
      throw new NodeFailure(ErrorCode.ENVELOPE_REFUSAL, 'the model refused the call', modelIds(model));
    }
    let reason: RetryReason;
    let problem: string;
    if (a.finish === 'length') {
      reason = 'truncation';
      problem = 'the answer was cut off by the token budget';
    } else {
      const parsed = parse(a.text);
      const problems = parsed.ok ? q.check(parsed.value) : ['the answer is not JSON'];
      if (parsed.ok && !problems.length) return { value: parsed.value, ...(usage ? { usage } : {}) };
      reason = parsed.ok ? 'schema-violation' : 'parse-error';
      problem = problems.slice(0, 3).join('; ');
    }
    failed++;
    if (failed > q.rounds) {
      await exhausted(ctx, turn + 1, reason, problem);
      if (reason === 'truncation') throw await breachTruncation(ctx, q.rounds, failed, q.output.name);
      throw new NodeFailure(q.invalidCode, `no valid ${q.output.name}: ${problem}`, {
        ...modelIds(model),
        rounds: failed,
      });
    }
    if (reason === 'truncation') {
      // Same conversation, twice the budget, no corrective fragment (RFC 0033 §B).
      maxTokens = TRUNCATION_MULTIPLIER * (maxTokens ?? a.usage?.outputTokens ?? DEFAULT_BUDGET);
      retry = [attempted(ctx, turn + 2, reason, null)];
      continue;
    }
    messages.push({ role: 'assistant', content: a.text, toolCalls: [] });
    messages.push({ role: 'user', content: `Your answer was refused (${problem}). Answer again with valid JSON.` });
    retry = [attempted(ctx, turn + 2, reason, problem)];
  }
}
