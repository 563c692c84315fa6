import type { NodeModule } from '../node-registry.js';
import type { PromptResolver } from '../services/prompt-resolution.js';

/**
 * `local.sample.demo.mock-ai` (fixture conformance-prompt-all-four-kinds): resolves and composes the node's
 * PromptRefs (RFC 0027/0029 events) and outputs the composed body without calling a model; with no ref resolved
 * it outputs the run variable `prompt` (the fixture's baseline).
 */
export function mockAiNode(resolver: PromptResolver): NodeModule {
  return {
    typeId: 'local.sample.demo.mock-ai',
    requires: ['promptLibrary'],
    async execute(ctx) {
      const r = await resolver.composeForNode(ctx);
      const baseline = typeof ctx.variables.prompt === 'string' ? ctx.variables.prompt : '';
      return {
        outputs: {
          prompt: r.prompts.length ? r.text : baseline,
          refs: r.prompts.map((p) => p.ref),
          hashes: r.prompts.map((p) => p.composition.hash),
        },
      };
    },
  };
}
