import { ErrorCode } from '../../core/index.js';
import { recorded } from '../agents/emit-once.js';
import { NodeFailure } from '../node-registry.js';
import type { NodeModule } from '../node-registry.js';
import { mockOf } from '../services/mock-providers.js';

/**
 * `core.ai.callPrompt` as the mock provider extension runs it (run-options.md §"Mock provider extension", fixture
 * `conformance-stream-text`): with `configurable.mockProvider` `stream-text` the AI call is the mock's, so the
 * prompt is not read; each token is one `output.chunk` event (`{nodeId, runId, chunk, isLast, meta}`, `meta.model`
 * on every chunk, `finishReason` and `usage` on the last), paced by `delayMsPerToken`, and the node outputs the
 * text. A chunk already in the node's history is not emitted again (a resumed node continues after it). Without a
 * mock the node fails `capability_not_provided`: this host routes prompts to its model through
 * `local.ai.callPrompt`, and does not stream model output.
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
        'core.ai.callPrompt runs here only through configurable.mockProvider (stream-text); use local.ai.callPrompt for the host model',
        { typeId: ctx.node.typeId },
      );
    const chunks = mock.tokens.length ? mock.tokens : [''];
    for (let i = recorded(ctx, 'output.chunk').length; i < chunks.length; i++) {
      if (i > 0 && mock.delayMsPerToken > 0) await ctx.sleep(mock.delayMsPerToken);
      const isLast = i === chunks.length - 1;
      const meta = isLast
        ? { model: mock.model, finishReason: mock.finishReason, usage: mock.usage }
        : { model: mock.model };
      await ctx.emit([
        { type: 'output.chunk', payload: { nodeId: ctx.node.id, runId: ctx.runId, chunk: chunks[i], isLast, meta } },
      ]);
    }
    return {
      outputs: { text: chunks.join(''), finishReason: mock.finishReason, usage: mock.usage, model: mock.model },
    };
  },
};
