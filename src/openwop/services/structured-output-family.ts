import { structuredOutputOnModel } from '../nodes/structured-output-model.js';
import type { ModelFor } from '../nodes/structured-output-model.js';
import type { ServiceFamily } from '../service-family.js';
import type { MeteredModel } from './provider-usage.js';
import { providerUsageCapability } from './provider-usage.js';

/**
 * Runs `core.ai.structuredOutput` nodes whose `config.provider` is not `mock` on the models `modelFor` gives (the
 * CLI's `serve --model` factory). Advertises `providerUsage` when the host model is metered.
 */
export function createStructuredOutputFamily(o: { modelFor: ModelFor; hostModel: MeteredModel }): ServiceFamily {
  return {
    name: 'structuredOutput',
    capabilities: () => providerUsageCapability(o.hostModel),
    wrap: (node, mod) =>
      node.typeId === 'core.ai.structuredOutput' ? structuredOutputOnModel(mod, o.modelFor) : undefined,
  };
}
