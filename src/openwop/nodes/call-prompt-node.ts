import { NodeFailure } from '../node-registry.js';
import type { NodeModule } from '../node-registry.js';
import type { PromptResolver } from '../services/prompt-resolution.js';

/**
 * `local.ai.callPrompt`: resolves and composes the node's PromptRefs (RFC 0027/0029 events), then asks
 * `ctx.aiEnvelope.generate` with the composed system (system + schema-hint) and user (few-shot + user) bodies.
 * The kind is `config.envelopeType`, else the system template's `modelHints.envelopeType`. Outputs the envelope.
 */
export function callPromptNode(resolver: PromptResolver): NodeModule {
  return {
    typeId: 'local.ai.callPrompt',
    requires: ['promptLibrary', 'aiEnvelope'],
    async execute(ctx) {
      const composed = await resolver.composeForNode(ctx);
      const hinted = composed.prompts.find((p) => p.kind === 'system')?.template.modelHints?.envelopeType;
      const envelopeType = typeof ctx.node.config.envelopeType === 'string' ? ctx.node.config.envelopeType : hinted;
      if (typeof envelopeType !== 'string' || !envelopeType) {
        throw new NodeFailure('validation_error', 'no envelopeType in config or in the system template', {
          path: '/config/envelopeType',
        });
      }
      const r = await ctx.aiEnvelope!.generate({
        systemPrompt: composed.system,
        userMessage: composed.user,
        envelopeType,
        idempotencyKey: `activation-${ctx.activation}`,
      });
      return {
        outputs: {
          envelopeType: r.envelopeType,
          payload: r.payload,
          envelopeId: r.envelopeId,
          refs: composed.prompts.map((p) => p.ref),
        },
      };
    },
  };
}
