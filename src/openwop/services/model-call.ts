/**
 * One recorded model call of a structured-output caller (`ctx.aiEnvelope.generate`, the supervisor): the answer is
 * checkpointed in the run's log with its `provider.usage` and, for a truncated or refused answer, its
 * `envelope.truncated` / `envelope.refusal` (RFC 0032 §B.3-4), all in one batch: a resumed node reads the recorded
 * answer and calls nothing, emits nothing.
 */
import { ErrorCode } from '../../core/index.js';
import { NodeFailure } from '../node-registry.js';
import type { NodeContext } from '../node-registry.js';
import type { RunEventInput } from '../types.js';
import type { EnvelopeFinish, EnvelopeModel, EnvelopeModelMessage, EnvelopeOutputFormat } from './ai-envelope-model.js';
import { modelEffect } from './model-effect.js';
import { checkpointEvent, recordedUsage, usageEvents, usageTokens } from './provider-usage.js';
import type { ModelUsage } from './provider-usage.js';
import { recallCheckpoint } from './recorded.js';

/** What one call is asked. */
export interface CallRequest {
  messages: readonly EnvelopeModelMessage[];
  output?: EnvelopeOutputFormat;
  maxTokens?: number;
}

/** What one call answered (`usage` when metered). */
export interface CallAnswer {
  text: string;
  finish: EnvelopeFinish;
  usage?: ModelUsage;
}

/** The ids reliability events carry for `model`. */
export function modelIds(model: EnvelopeModel): { provider: string; model: string } {
  return model.meter ?? { provider: model.name, model: model.name };
}

function reliabilityEvents(ctx: NodeContext, model: EnvelopeModel, a: CallAnswer): RunEventInput[] {
  const ids = modelIds(model);
  if (a.finish === 'refusal')
    // refusalText is not kept: it may echo the prompt (envelope-refusal-no-prompt-leak).
    return [{ type: 'envelope.refusal', payload: { nodeId: ctx.node.id, ...ids, refusalText: null } }];
  if (a.finish === 'length')
    return [
      {
        type: 'envelope.truncated',
        payload: {
          nodeId: ctx.node.id,
          ...ids,
          stopReason: 'max_tokens',
          outputTokenCount: a.usage?.outputTokens ?? null,
        },
      },
    ];
  return [];
}

function asAnswer(v: unknown): Omit<CallAnswer, 'usage'> {
  if (typeof v === 'string') return { text: v, finish: 'stop' }; // recorded before finish was kept
  const r = v as { text: string; finish?: EnvelopeFinish };
  return { text: r.text, finish: r.finish ?? 'stop' };
}

/**
 * The answer recorded under `name`, else one model call recorded under it. `before` (e.g. the
 * `envelope.retry.attempted` of this retry) is appended in the same batch, ahead of the answer.
 * @throws NodeFailure `provider_unavailable` when the model throws.
 */
export async function recordedCall(
  ctx: NodeContext,
  model: EnvelopeModel,
  name: string,
  req: CallRequest,
  before: RunEventInput[] = [],
): Promise<CallAnswer> {
  const prior = recallCheckpoint(ctx, name);
  if (prior.found) {
    const usage = recordedUsage(ctx.history, name);
    return { ...asAnswer(prior.value), ...(usage ? { usage } : {}) };
  }
  let reply: Awaited<ReturnType<EnvelopeModel['next']>>;
  let chunks: RunEventInput[];
  try {
    ({ reply, chunks } = await modelEffect(ctx, name, { model: model.name, ...req }, (onText, sampling) =>
      model.next({
        messages: [...req.messages],
        tools: [],
        signal: ctx.signal,
        onText,
        ...(req.output ? { output: req.output } : {}),
        ...sampling,
      }),
    ));
  } catch (err) {
    if (err instanceof NodeFailure) throw err; // the effect guard's refusal, not the provider's
    throw new NodeFailure(ErrorCode.PROVIDER_UNAVAILABLE, `model ${model.name} failed`, {
      provider: model.name,
      cause: err instanceof Error ? err.message : String(err),
    });
  }
  const text = reply.kind === 'final' ? reply.text : (reply.text ?? '');
  const finish = (reply.kind === 'final' && reply.finish) || 'stop';
  const metered = usageEvents(ctx, model, { messages: req.messages, tools: [] }, reply);
  const usage = metered[0] ? usageTokens(metered[0].payload) : undefined;
  const answer: CallAnswer = { text, finish, ...(usage ? { usage } : {}) };
  const recorded = finish === 'stop' ? text : { text, finish };
  // provider.usage stays just before its checkpoint (recordedUsage reads it there).
  await ctx.emit([
    ...before,
    ...chunks,
    ...reliabilityEvents(ctx, model, answer),
    ...metered,
    checkpointEvent(ctx, name, recorded, reply.cacheKey),
  ]);
  return answer;
}
