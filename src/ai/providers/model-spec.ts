/**
 * `--model <provider>:<model>` (issue 15): which provider, which model, and where it is served. The same parser
 * serves every entry point (`agent --model`, `serve --model`), so a spec means the same thing everywhere.
 */
import { ErrorCode, HostError } from '../../core/index.js';

/** The providers a spec may name. */
export const MODEL_PROVIDERS = ['openai', 'openai-compatible', 'anthropic', 'scripted'] as const;

/** One of {@link MODEL_PROVIDERS}. */
export type ModelProviderId = (typeof MODEL_PROVIDERS)[number];

/**
 * The most `temperature` each provider's API accepts (the least is 0 for all): the Anthropic Messages API 1, OpenAI
 * Chat Completions 2 (an OpenAI-compatible server is held to OpenAI's range); the scripted stand-in takes any.
 */
export const MAX_TEMPERATURE: Readonly<Record<ModelProviderId, number | undefined>> = {
  openai: 2,
  'openai-compatible': 2,
  anthropic: 1,
  scripted: undefined,
};

/** True when `p` names one of {@link MODEL_PROVIDERS}. */
export function isModelProvider(p: string): p is ModelProviderId {
  return (MODEL_PROVIDERS as readonly string[]).includes(p);
}

/** A parsed `--model` value (plus `--base-url`, when given). */
export interface ModelSpec {
  provider: ModelProviderId;
  /** The provider's model id (`gpt-4.1`, `claude-sonnet-4-5`, `llama3.1`); for `scripted`, the script file. */
  model: string;
  /** `--base-url`: overrides `OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL`. */
  baseUrl?: string;
}

const REMEDIATION =
  'Pass --model <provider>:<model>, e.g. openai:gpt-4.1, anthropic:claude-sonnet-4-5, ' +
  'openai-compatible:llama3.1 --base-url http://127.0.0.1:11434/v1, or scripted:<script.json> (docs/models.md).';

/**
 * Parses `provider:model`. Only the first `:` separates them (model ids such as `llama3.1:8b` keep theirs).
 * @throws HostError `MHS.HOST.MODEL_CONFIG` (details.spec) for an unknown provider, an empty model or a base URL
 * that is not http(s).
 */
export function parseModelSpec(spec: string, opts: { baseUrl?: string } = {}): ModelSpec {
  const i = spec.indexOf(':');
  const provider = i < 0 ? spec.trim() : spec.slice(0, i).trim();
  const model = i < 0 ? '' : spec.slice(i + 1).trim();
  if (!isModelProvider(provider))
    throw new HostError(
      ErrorCode.HOST_MODEL_CONFIG,
      `unknown model provider "${provider}" (expected one of ${MODEL_PROVIDERS.join(', ')})`,
      { spec },
      { remediation: REMEDIATION },
    );
  if (!model)
    throw new HostError(
      ErrorCode.HOST_MODEL_CONFIG,
      `--model ${spec} names no model`,
      { spec },
      { remediation: REMEDIATION },
    );
  if (opts.baseUrl !== undefined) checkBaseUrl(opts.baseUrl, '--base-url');
  return { provider, model, ...(opts.baseUrl !== undefined ? { baseUrl: opts.baseUrl } : {}) };
}

/**
 * Checks that `url` is an absolute http(s) URL.
 * @throws HostError `MHS.HOST.MODEL_CONFIG` (details.source) otherwise.
 */
export function checkBaseUrl(url: string, source: string): string {
  let ok = false;
  try {
    ok = ['http:', 'https:'].includes(new URL(url).protocol);
  } catch {
    ok = false;
  }
  if (!ok)
    throw new HostError(
      ErrorCode.HOST_MODEL_CONFIG,
      `${source} is not an http(s) URL`,
      { source },
      { remediation: 'Give the server root of the API, e.g. http://127.0.0.1:11434/v1 for Ollama.' },
    );
  return url;
}
