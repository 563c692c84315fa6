/**
 * `core.ai.structuredOutput` on a real model (issue 15): a node whose `config.provider` is not the conformance
 * `mock` asks the model its `provider`/`model` name for one JSON value valid against `outputSchema`, through the
 * provider's structured output, with the envelope-completion rules (see `structured-ask.ts`): invalid answers are
 * re-asked (then `envelope_invalid`), a refusal fails `envelope_refusal`, a truncation is re-asked with twice the
 * budget. Input `messages` (`{role, content}` list) is the conversation.
 */
import { ErrorCode, isJsonObject } from '../../core/index.js';
import { NodeFailure } from '../node-registry.js';
import type { NodeContext, NodeModule } from '../node-registry.js';
import type { ModelFor } from '../services/ai-envelope-model.js';
import { namedModel } from '../services/named-model.js';
import { askStructured } from '../services/structured-ask.js';
import { outputSchemaProblems } from './structured-output-node.js';

export type { ModelFor };

/** Invalid answers re-asked before the node fails `envelope_invalid`. */
const ROUNDS = 2;

function conversation(ctx: NodeContext): { system: string; user: string } {
  const list = ctx.inputs.messages;
  if (!Array.isArray(list))
    throw new NodeFailure(ErrorCode.VALIDATION_ERROR, 'input messages must be an array', { input: 'messages' });
  const text = (role: string) =>
    list
      .filter((m): m is { role: string; content: unknown } => isJsonObject(m) && m.role === role)
      .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)))
      .join('\n\n');
  const other = list.filter((m) => !(isJsonObject(m) && m.role === 'system'));
  return {
    system: `${text('system')}\n\nAnswer with one JSON value valid against the given schema and nothing else.`.trim(),
    user: other.length === 1 && isJsonObject(other[0]) ? String(other[0].content) : JSON.stringify(other),
  };
}

/** Executes the node on `modelFor(provider, model)`. */
export async function executeOnModel(ctx: NodeContext, modelFor: ModelFor): Promise<{ outputs: { output: unknown } }> {
  const {
    provider,
    model: modelId,
    outputSchema,
    maxTokens,
  } = ctx.node.config as {
    provider: string;
    model: string;
    outputSchema: Record<string, unknown>;
    maxTokens?: unknown;
  };
  const model = namedModel(modelFor, provider, modelId);
  const { system, user } = conversation(ctx);
  // A provider's structured output needs an object root; another schema is wrapped as {value}.
  const wrapped = outputSchema.type !== 'object';
  const schema = wrapped ? { type: 'object', required: ['value'], properties: { value: outputSchema } } : outputSchema;
  const { value } = await askStructured(ctx, model, {
    key: 'structured-output',
    system,
    user,
    output: { name: 'structured_output', schema },
    rounds: ROUNDS,
    ...(typeof maxTokens === 'number' ? { maxTokens } : {}),
    check: (v) => outputSchemaProblems(outputSchema, wrapped ? (v as { value?: unknown } | null)?.value : v),
    invalidCode: ErrorCode.ENVELOPE_INVALID,
  });
  return { outputs: { output: wrapped ? (value as { value: unknown }).value : value } };
}

/** The layer a model family puts over `core.ai.structuredOutput`: non-mock providers run on `modelFor`. */
export function structuredOutputOnModel(mod: NodeModule, modelFor: ModelFor): NodeModule {
  return {
    ...mod,
    execute: (ctx) => (ctx.node.config.provider === 'mock' ? mod.execute(ctx) : executeOnModel(ctx, modelFor)),
  };
}
