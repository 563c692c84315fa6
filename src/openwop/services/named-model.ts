import { ErrorCode } from '../../core/index.js';
import { NodeFailure } from '../node-registry.js';
import type { EnvelopeModel, ModelFor } from './ai-envelope-model.js';

/**
 * The model `provider`/`model` name, from `modelFor`.
 * @throws NodeFailure `provider_unavailable` when the host has no such model or cannot build it.
 */
export function namedModel(modelFor: ModelFor, provider: string, model: string): EnvelopeModel {
  let m: EnvelopeModel | undefined;
  try {
    m = modelFor(provider, model);
  } catch (err) {
    throw new NodeFailure(ErrorCode.PROVIDER_UNAVAILABLE, `cannot reach ${provider}:${model}`, {
      provider,
      model,
      cause: (err as { code?: string }).code ?? (err instanceof Error ? err.message : String(err)),
    });
  }
  if (!m)
    throw new NodeFailure(ErrorCode.PROVIDER_UNAVAILABLE, `this host has no model ${provider}:${model}`, {
      provider,
      model,
    });
  return m;
}
