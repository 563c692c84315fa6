/**
 * A model-provider call as a Layer-2 effect (v2 idempotency.md §"Layer 2"; seam `provider.model-call`): claimed
 * through the node's effect guard before it is sent and completed with the reply, under the name the call site records
 * its answer under, so a node re-executed after a crash answers a completed call from its record. A model call changes
 * nothing outside the run, so it is idempotent: an attempt whose process died mid-call is released and sent again as
 * the next attempt of the same effect; a failed call is released (no answer was obtained).
 *
 * Every model call of a run goes through here (`ctx.aiEnvelope`, structured output, the supervisor, `ctx.agentRuntime`,
 * manifest agents), so this is where a run's `configurable.mockProvider` takes the model's place (run-options.md
 * §"Mock provider extension": ALL AI activity calls): the mock answers, nothing is sent and no effect is claimed.
 */
import type { NodeContext } from '../node-registry.js';
import type { RunEventInput } from '../types.js';
import { mockModelCall } from './mock-answer.js';
import type { MockTurn } from './mock-answer.js';
import { mockOf } from './mock-providers.js';
import { samplingOf } from '../run-options.js';
import type { Sampling } from '../run-options.js';
import { outputStream } from './output-stream.js';
import type { OutputEnd } from './output-stream.js';

/** The last chunk's `meta` of a model's answer (`finish` absent means `stop`). */
function endOf(reply: unknown): OutputEnd {
  const r = reply as { kind?: string; finish?: string; usage?: OutputEnd['usage'] };
  return {
    finishReason: r.kind === 'tool_calls' ? 'tool_calls' : (r.finish ?? 'stop'),
    ...(r.usage ? { usage: r.usage } : {}),
  };
}

/** A model call's answer and the `output.chunk` events of its streamed text, to append with the answer's record. */
export interface ModelEffectResult<T> {
  reply: T | MockTurn;
  chunks: RunEventInput[];
}

/**
 * Runs `send` (one `model.next`) through `ctx.effects` when the host installs it, else directly; under a mock
 * provider, the mock's answer instead (its chunks emitted first). `send` gets the call's sampling (the run's v2
 * `ai.temperature`, and `ai.maxTokens` as a ceiling on the request's own `maxTokens`; run-options.ts) to put on the
 * provider request; the effect records the request with it. `send` gets the `onText` of the call's output
 * stream: the text the provider streamed comes back as `output.chunk` events (the `messages` stream mode;
 * output-stream.ts), which the caller appends in the batch that records the answer, so a refusal's text never reaches
 * the log and a call answered from its record after a restart streams nothing again.
 * @throws NodeFailure with the `error` mock's code.
 */
export async function modelEffect<T>(
  ctx: NodeContext,
  name: string,
  request: { model: string } & Record<string, unknown>,
  send: (onText: (delta: string) => void, sampling: Sampling) => Promise<T>,
): Promise<ModelEffectResult<T>> {
  const mock = mockOf(ctx.configurable);
  if (mock) return { reply: await mockModelCall(ctx, mock), chunks: [] };
  const own = typeof request.maxTokens === 'number' ? request.maxTokens : undefined;
  const sampling = samplingOf(ctx.configurable, own);
  const out = outputStream(ctx, request.model);
  const streamed = () => send(out.onText, sampling);
  const sent = { ...request, ...sampling };
  const reply = ctx.effects
    ? await ctx.effects.perform(
        { seam: 'provider.model-call', name, request: sent, idempotent: true, failed: () => 'released' },
        streamed,
      )
    : await streamed();
  return { reply, chunks: out.events(endOf(reply)) };
}
