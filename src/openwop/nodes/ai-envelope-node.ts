import { NodeFailure } from '../node-registry.js';
import type { NodeModule } from '../node-registry.js';

function text(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/**
 * `local.ai.envelope`: one `ctx.aiEnvelope.generate` per activation. `config.envelopeType` is the kind asked for;
 * the system prompt is `config.systemPrompt` (or the `systemPrompt` input), the user message `config.userMessage`
 * (or the `userMessage` input). Outputs the accepted envelope's `envelopeType`, `payload`, `envelopeId` and `envelope`,
 * and the generation's `usage` when the model is metered.
 */
export const aiEnvelopeNode: NodeModule = {
  typeId: 'local.ai.envelope',
  requires: ['aiEnvelope'],
  validate: (node) =>
    typeof node.config.envelopeType === 'string' && node.config.envelopeType
      ? []
      : [{ path: '/config/envelopeType', message: 'must be a non-empty string' }],
  async execute(ctx) {
    const c = ctx.node.config;
    const systemPrompt = text(ctx.inputs.systemPrompt) ?? text(c.systemPrompt);
    if (systemPrompt === undefined)
      throw new NodeFailure('validation_error', 'local.ai.envelope needs a systemPrompt', {
        path: '/config/systemPrompt',
      });
    const userMessage = text(ctx.inputs.userMessage) ?? text(c.userMessage);
    const r = await ctx.aiEnvelope!.generate({
      systemPrompt,
      envelopeType: String(c.envelopeType),
      ...(userMessage !== undefined ? { userMessage } : {}),
      idempotencyKey: `activation-${ctx.activation}`,
    });
    return {
      outputs: {
        envelopeType: r.envelopeType,
        payload: r.payload,
        envelopeId: r.envelopeId,
        envelope: r.envelope,
        // The generation's token counts (the sum of its provider.usage events), when the model is metered.
        ...(r.usage ? { usage: r.usage } : {}),
      },
    };
  },
};
