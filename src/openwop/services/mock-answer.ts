/**
 * What a mock provider answers (run-options.md §"Canonical mock provider catalog"): the `output.chunk` events of one AI
 * call, the answer a model-calling path receives in place of a model's, and the failure of `error`. A closed-form
 * function of the run's `configurable.mockProvider`, so a replay answers the same.
 */
import { NodeFailure } from '../node-registry.js';
import type { NodeContext } from '../node-registry.js';
import type { ErrorMock, MockProvider, MockUsage } from './mock-providers.js';

/** One `output.chunk` of a mocked AI call, without its `nodeId` and `runId`. */
export interface MockChunk {
  chunk: string;
  isLast: boolean;
  meta: Record<string, unknown>;
}

/** The answer a model-calling path gets from the mock (structurally a `ModelTurn` of src/ai). */
export type MockTurn =
  | {
      kind: 'final';
      text: string;
      usage: { inputTokens: number; outputTokens: number };
      finish: 'stop' | 'length' | 'refusal';
    }
  | { kind: 'tool_calls'; calls: { id: string; name: string; arguments: Record<string, unknown> }[] };

/**
 * The chunks of one call: `stream-text` one per token (`meta.model` on each, `finishReason` and `usage` on the last);
 * `tool-calls` one per call (`meta.toolCalls: [call]`, `finishReason: tool_calls` on the last); `usage-only` a single
 * empty chunk with `meta.usage`; `error` none (it fails the call).
 */
export function mockChunks(m: MockProvider): MockChunk[] {
  switch (m.id) {
    case 'stream-text': {
      const tokens = m.tokens.length ? m.tokens : [''];
      return tokens.map((chunk, i) => {
        const isLast = i === tokens.length - 1;
        const meta = isLast ? { model: m.model, finishReason: m.finishReason, usage: m.usage } : { model: m.model };
        return { chunk, isLast, meta };
      });
    }
    case 'tool-calls':
      return m.toolCalls.map((call, i) => {
        const isLast = i === m.toolCalls.length - 1;
        return { chunk: '', isLast, meta: { toolCalls: [call], ...(isLast ? { finishReason: 'tool_calls' } : {}) } };
      });
    case 'usage-only':
      return [{ chunk: '', isLast: true, meta: { usage: m.usage } }];
    case 'error':
      return [];
  }
}

/** Milliseconds between successive chunks. */
function cadence(m: MockProvider): number {
  return m.id === 'stream-text' || m.id === 'tool-calls' ? m.delayMsPerToken : 0;
}

/**
 * The `error` mock's failure: the node (and so the run) fails with the configured `code` and `message`
 * (RunSnapshot.error). `details.retryable` carries the configured flag: this host gives nodes no retry budget, so a
 * retryable failure is not retried.
 */
export function mockFailure(m: ErrorMock): NodeFailure {
  return new NodeFailure(m.code, m.message, { mockProvider: 'error', retryable: m.retryable });
}

function tokens(u: MockUsage): { inputTokens: number; outputTokens: number } {
  return { inputTokens: u.promptTokens, outputTokens: u.completionTokens };
}

/** The answer a model-calling path receives (not for `error`, which fails instead). */
export function mockTurn(m: Exclude<MockProvider, ErrorMock>): MockTurn {
  switch (m.id) {
    case 'stream-text':
      return {
        kind: 'final',
        text: m.tokens.join(''),
        usage: tokens(m.usage),
        finish: m.finishReason === 'length' ? 'length' : m.finishReason === 'content_filter' ? 'refusal' : 'stop',
      };
    case 'tool-calls':
      // Checked at run creation: each `arguments` encodes an object.
      return {
        kind: 'tool_calls',
        calls: m.toolCalls.map((c) => ({
          id: c.id,
          name: c.name,
          arguments: JSON.parse(c.arguments) as Record<string, unknown>,
        })),
      };
    case 'usage-only':
      return { kind: 'final', text: '', usage: tokens(m.usage), finish: 'stop' };
  }
}

/**
 * Plays the mock for one AI call of `ctx`'s node: waits `failAfterMs` and throws for `error`; else emits the chunks
 * from index `from` on (a resumed node skips those already in its history), paced by `delayMsPerToken`, and returns
 * the mock (narrowed: not `error`).
 * @throws NodeFailure with the `error` mock's code.
 */
export async function playMock(ctx: NodeContext, m: MockProvider, from = 0): Promise<Exclude<MockProvider, ErrorMock>> {
  if (m.id === 'error') {
    if (m.failAfterMs > 0) await ctx.sleep(m.failAfterMs);
    throw mockFailure(m);
  }
  const chunks = mockChunks(m);
  const pause = cadence(m);
  for (let i = from; i < chunks.length; i++) {
    if (i > 0 && pause > 0) await ctx.sleep(pause);
    await ctx.emit([{ type: 'output.chunk', payload: { nodeId: ctx.node.id, runId: ctx.runId, ...chunks[i]! } }]);
  }
  return m;
}

/**
 * One model call of a run under a mock provider (run-options.md: the engine routes ALL AI activity calls through
 * the mock): the chunks are emitted and the mock's answer is returned in place of the model's.
 * @throws NodeFailure with the `error` mock's code.
 */
export async function mockModelCall(ctx: NodeContext, m: MockProvider): Promise<MockTurn> {
  return mockTurn(await playMock(ctx, m));
}
