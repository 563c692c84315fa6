import type { EnvelopeOutputFormat } from './ai-envelope-model.js';

/** The structured output of a `best-match` delegation choice: one of `agentIds`, with a confidence. */
export function choiceFormat(agentIds: readonly string[]): EnvelopeOutputFormat {
  return {
    name: 'delegation_choice',
    schema: {
      type: 'object',
      required: ['agentId', 'confidence'],
      properties: {
        agentId: { type: 'string', enum: [...agentIds] },
        confidence: { type: 'number', minimum: 0, maximum: 1 },
      },
      additionalProperties: false,
    },
  };
}

/** The structured output of a consensus vote. */
export const VOTE_FORMAT: EnvelopeOutputFormat = {
  name: 'consensus_vote',
  schema: {
    type: 'object',
    required: ['vote'],
    properties: { vote: { type: 'string', enum: ['accept', 'reject'] }, amendment: { type: 'object' } },
    additionalProperties: false,
  },
};
