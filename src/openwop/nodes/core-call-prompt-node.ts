import { ErrorCode } from '../../core/index.js';
import { recorded } from '../agents/emit-once.js';
import { NodeFailure } from '../node-registry.js';
import type { NodeModule } from '../node-registry.js';
import { mockChunks, playMock } from '../services/mock-answer.js';
import { mockOf } from '../services/mock-providers.js';

/**
 * `core.ai.callPrompt` as the mock provider extension runs it (run-options.md §"Mock provider extension", fixture
 * `conformance-stream-text`): under `configurable.mockProvider` the AI call is the mock's, so the prompt is not read.
 * Its chunks are `output.chunk` events (`{nodeId, runId, chunk, isLast, meta}`, see `mockChunks`) paced by
 * `delayMsPerToken`; the node outputs the text (`stream-text`), the tool calls (`tool-calls`) or the usage
 * (`usage-only`), and fails with the configured code under `error`. A chunk already in the node's history is not
 * emitted again (a resumed node continues after it). Without a mock the node fails `capability_not_provided`: this
 * host routes prompts to its model through `local.ai.callPrompt`, and does not stream model output.
 */
export const coreCallPromptNode: NodeModule = {
  typeId: 'core.ai.callPrompt',
  // The mock's answer is a closed-form function of the run's configurable (replay-deterministic by construction).
  pure: true,
  async execute(ctx) {
    const mock = mockOf(ctx.configurable);
    if (!mock)
      throw new NodeFailure(
        ErrorCode.CAPABILITY_NOT_PROVIDED,
        'core.ai.callPrompt runs here only through configurable.mockProvider; use local.ai.callPrompt for the host model',
        { typeId: ctx.node.typeId },
      );
    const played = await playMock(ctx, mock, recorded(ctx, 'output.chunk').length);
    switch (played.id) {
      case 'stream-text': {
        const text = mockChunks(played)
          .map((c) => c.chunk)
          .join('');
        return { outputs: { text, finishReason: played.finishReason, usage: played.usage, model: played.model } };
      }
      case 'tool-calls':
        return { outputs: { text: '', toolCalls: played.toolCalls, finishReason: 'tool_calls' } };
      case 'usage-only':
        return { outputs: { text: '', usage: played.usage } };
    }
  },
};
