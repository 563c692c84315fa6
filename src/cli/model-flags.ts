/**
 * The model flags every command that uses a model takes (issue 15): `--model <provider>:<model>`, `--base-url`,
 * `--model-timeout`, `--model-retries`, `--max-tokens`, `--no-stream`; turned into a provider by the one factory.
 */
import type { Command } from 'commander';
import { createModelProvider, parseModelSpec } from '../ai/index.js';
import type { ModelCallOptions, ModelEnv, ModelProvider, ModelSpec } from '../ai/index.js';
import { DEFAULT_MODEL_RETRIES, DEFAULT_MODEL_TIMEOUT_MS, MODEL_PROVIDERS } from '../ai/index.js';
import { badFlag, positiveMs } from './cli-runtime.js';

/** The parsed model flags. */
export interface ModelFlags {
  model?: string;
  baseUrl?: string;
  modelTimeout?: number;
  modelRetries?: number;
  maxTokens?: number;
  /** false with `--no-stream`. */
  stream?: boolean;
}

function wholeNumber(flag: string, min: number): (v: string) => number {
  return (v) => {
    const n = Number(v);
    if (!/^\d+$/.test(v.trim()) || !Number.isSafeInteger(n) || n < min)
      throw badFlag(flag, `expected a whole number >= ${min}`, { value: v });
    return n;
  };
}

/** Adds the model flags to `cmd`. */
export function withModelOptions(cmd: Command): Command {
  return cmd
    .option('--model <provider:model>', `model to use: ${MODEL_PROVIDERS.join(' | ')} (docs/models.md)`)
    .option('--base-url <url>', 'API base URL (overrides OPENAI_BASE_URL / ANTHROPIC_BASE_URL)')
    .option(
      '--model-timeout <ms>',
      `per-request model timeout (default ${DEFAULT_MODEL_TIMEOUT_MS})`,
      positiveMs('--model-timeout'),
    )
    .option(
      '--model-retries <n>',
      `retries on 429/5xx, honouring retry-after (default ${DEFAULT_MODEL_RETRIES})`,
      wholeNumber('--model-retries', 0),
    )
    .option('--max-tokens <n>', 'most tokens of one answer', wholeNumber('--max-tokens', 1))
    .option('--no-stream', 'ask for whole answers instead of streamed ones');
}

/** The spec `--model` (and `--base-url`) give, or none. @throws HostError `MHS.HOST.MODEL_CONFIG`. */
export function modelSpecOf(f: ModelFlags): ModelSpec | undefined {
  if (f.model === undefined) {
    if (f.baseUrl !== undefined) throw badFlag('--base-url', 'needs --model');
    return undefined;
  }
  return parseModelSpec(f.model, f.baseUrl !== undefined ? { baseUrl: f.baseUrl } : {});
}

/** The provider of a spec with the flags' call options. @throws HostError `MHS.HOST.MODEL_CONFIG`. */
export function providerOf(
  spec: ModelSpec,
  f: ModelFlags,
  env: ModelEnv,
  extra: Pick<ModelCallOptions, 'onDelta'> = {},
): ModelProvider {
  return createModelProvider(spec, env, {
    ...extra,
    ...(f.modelTimeout !== undefined ? { timeoutMs: f.modelTimeout } : {}),
    ...(f.modelRetries !== undefined ? { maxRetries: f.modelRetries } : {}),
    ...(f.maxTokens !== undefined ? { maxTokens: f.maxTokens } : {}),
    ...(f.stream === false ? { stream: false } : {}),
  });
}
