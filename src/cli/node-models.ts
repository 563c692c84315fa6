import { ErrorCode, HostError } from '../core/index.js';
import { MAX_TEMPERATURE, MODEL_PROVIDERS, isModelProvider, parseModelSpec } from '../ai/index.js';
import type { ModelEnv, ModelProvider, ModelSpec } from '../ai/index.js';
import { providerOf } from './model-flags.js';
import type { ModelFlags } from './model-flags.js';
import type { RunModelLimits } from '../openwop/run-options.js';

/** Providers a node may name besides the host model (never `scripted`: its model id is a file path). */
const NODE_PROVIDERS = new Set(['openai', 'openai-compatible', 'anthropic']);

/**
 * The models nodes may name under `serve --model` (`core.ai.structuredOutput` `config.provider` / `config.model`):
 * the host model itself, or another network model built once with the same call flags and the environment's keys
 * and base URLs (`--base-url` only for the host model's provider).
 * @throws HostError `MHS.HOST.MODEL_CONFIG` for `scripted` or a model that cannot be built (missing key, ...).
 */
export function nodeModels(
  spec: ModelSpec,
  hostModel: ModelProvider,
  flags: ModelFlags,
  env: ModelEnv,
): (provider: string, model: string) => ModelProvider {
  const built = new Map<string, ModelProvider>();
  return (provider, model) => {
    if (provider === spec.provider && model === spec.model) return hostModel;
    if (!NODE_PROVIDERS.has(provider))
      throw new HostError(ErrorCode.HOST_MODEL_CONFIG, `a node may not name provider ${provider}`, { provider });
    const key = `${provider}:${model}`;
    let m = built.get(key);
    if (!m) {
      const base = provider === spec.provider && spec.baseUrl !== undefined ? { baseUrl: spec.baseUrl } : {};
      m = providerOf(parseModelSpec(key, base), flags, env);
      built.set(key, m);
    }
    return m;
  };
}

/**
 * The model a run names with `RunOptions.configurable.model` (run-options.md §Reserved keys: "Override the AI model
 * for nodes that consume ctx.config.configurable.model"): `<provider>:<model>` as `--model` spells it when the part
 * before the first `:` is a provider, else a model id of the host model's provider (`llama3.1:8b` is a model of it).
 * @throws HostError `MHS.HOST.MODEL_CONFIG` as {@link nodeModels}.
 */
export function runModels(
  spec: ModelSpec,
  modelFor: (provider: string, model: string) => ModelProvider,
): (value: string) => ModelProvider {
  return (value) => {
    const i = value.indexOf(':');
    const prefix = i > 0 ? value.slice(0, i) : '';
    return (MODEL_PROVIDERS as readonly string[]).includes(prefix)
      ? modelFor(prefix, value.slice(i + 1))
      : modelFor(spec.provider, value);
  };
}

/**
 * What the model calls of a run accept under `serve --model` (checked at create): a run's `ai.model` spelled
 * `<provider>:<model>` goes to that provider, any other value (or none) to the host model's (as {@link runModels}
 * resolves it), and each provider's `temperature` ceiling is its API's ({@link MAX_TEMPERATURE}).
 */
export function runModelLimits(spec: ModelSpec): RunModelLimits {
  return {
    providerOf: (runModel) => {
      const i = runModel?.indexOf(':') ?? -1;
      const prefix = runModel && i > 0 ? runModel.slice(0, i) : '';
      return isModelProvider(prefix) ? prefix : spec.provider;
    },
    maxTemperature: (provider) => (isModelProvider(provider) ? MAX_TEMPERATURE[provider] : undefined),
  };
}
