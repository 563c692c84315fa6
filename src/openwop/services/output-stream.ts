/**
 * A real model's streamed text as the run's `output.chunk` events (the `messages` stream mode, stream-modes.md;
 * payload `{nodeId, runId, chunk, isLast, meta}` as the mock provider extension writes it). The deltas are held
 * until the call's outcome is known and appended in the batch that records its answer (so a call recorded after a
 * restart is never streamed twice; the chunks as the provider streamed them, adjacent small deltas joined, the last
 * with `isLast`, `meta.finishReason` and `meta.usage`): a refusal
 * (Anthropic `stop_reason: refusal`, OpenAI `content_filter`) is only known at the end of the stream and its text may
 * echo the prompt, so it must never reach the log (envelope-refusal-no-prompt-leak); a refused or failed call appends
 * no chunk.
 */
import type { NodeContext } from '../node-registry.js';
import type { RunEventInput } from '../types.js';

/** How a call ended, for the last chunk's `meta`. */
export interface OutputEnd {
  finishReason: string;
  usage?: { inputTokens: number; outputTokens: number };
}

/** The sink one model call streams into. */
export interface OutputStream {
  /** The provider's `onText`: takes each delta as it arrives. */
  readonly onText: (delta: string) => void;
  /** The held chunks as events (none when the call was refused), for the batch that records the call's answer. */
  events(end: OutputEnd): RunEventInput[];
}

/** A chunk is at least this long (adjacent deltas are joined), except the last. */
const MIN_CHUNK = 64;

/** The stream of one model call of `ctx`'s node (`model` goes into every chunk's `meta.model`). */
export function outputStream(ctx: NodeContext, model: string): OutputStream {
  const chunks: string[] = [];
  return {
    onText: (delta) => {
      if (!delta) return;
      if (chunks.length && chunks.at(-1)!.length < MIN_CHUNK) chunks[chunks.length - 1] += delta;
      else chunks.push(delta);
    },
    events(end) {
      if (end.finishReason === 'refusal' || end.finishReason === 'content_filter') return [];
      const last = { model, finishReason: end.finishReason, ...(end.usage ? { usage: end.usage } : {}) };
      return chunks.map((chunk, i) => {
        const isLast = i === chunks.length - 1;
        return {
          type: 'output.chunk',
          payload: { nodeId: ctx.node.id, runId: ctx.runId, chunk, isLast, meta: isLast ? last : { model } },
        };
      });
    },
  };
}
