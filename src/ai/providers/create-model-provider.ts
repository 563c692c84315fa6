/**
 * The one factory of model providers (issue 15): every entry point (`agent --model`, `serve --model`) turns a
 * {@link ModelSpec} into a provider here, so the environment variables and `--base-url` mean the same thing
 * everywhere. Callers of the agent loop and the OpenWOP services receive the provider; they never construct one.
 */
import { ErrorCode, HostError } from '../../core/index.js';
import { loadAgentScript } from '../agent-script.js';
import type { ModelProvider } from '../model-provider.js';
import { ScriptedProvider } from '../scripted-provider.js';
import { AnthropicProvider } from './anthropic-provider.js';
import { checkBaseUrl } from './model-spec.js';
import type { ModelSpec } from './model-spec.js';
import { OpenAIChatProvider } from './openai-provider.js';
import type { NetworkProviderOptions } from './provider-options.js';

/** The environment variables a provider reads (the providers' conventional names). */
export interface ModelEnv {
  OPENAI_API_KEY?: string | undefined;
  OPENAI_BASE_URL?: string | undefined;
  ANTHROPIC_API_KEY?: string | undefined;
  ANTHROPIC_BASE_URL?: string | undefined;
}

/** How a network provider calls: everything of {@link NetworkProviderOptions} but where and with which key. */
export type ModelCallOptions = Omit<NetworkProviderOptions, 'model' | 'apiKey' | 'baseUrl'>;

const OPENAI_URL = 'https://api.openai.com/v1';
const ANTHROPIC_URL = 'https://api.anthropic.com';
/** Sent to an OpenAI-compatible server when no OPENAI_API_KEY is set (local servers ignore the header). */
const NO_KEY = 'no-key';

function needKey(env: ModelEnv, name: 'OPENAI_API_KEY' | 'ANTHROPIC_API_KEY', spec: ModelSpec): string {
  const key = env[name]?.trim();
  if (!key)
    throw new HostError(
      ErrorCode.HOST_MODEL_CONFIG,
      `${spec.provider}:${spec.model} needs an API key in ${name}`,
      { provider: spec.provider, env: name },
      { remediation: `export ${name}=... (the key is sent to the provider only, never recorded).` },
    );
  return key;
}

function baseUrl(spec: ModelSpec, env: ModelEnv, name: 'OPENAI_BASE_URL' | 'ANTHROPIC_BASE_URL'): string | undefined {
  if (spec.baseUrl !== undefined) return checkBaseUrl(spec.baseUrl, '--base-url');
  const v = env[name]?.trim();
  return v ? checkBaseUrl(v, name) : undefined;
}

/**
 * The provider a spec names. `openai` needs OPENAI_API_KEY (base URL: `--base-url`, else OPENAI_BASE_URL, else
 * OpenAI's); `openai-compatible` needs a base URL (`--base-url` or OPENAI_BASE_URL) and sends OPENAI_API_KEY when
 * set; `anthropic` needs ANTHROPIC_API_KEY (base URL: `--base-url`, else ANTHROPIC_BASE_URL, else Anthropic's);
 * `scripted:<file>` plays that agent script.
 * @throws HostError `MHS.HOST.MODEL_CONFIG` (missing key or base URL, bad URL), `MHS.HOST.AGENT_SCRIPT_INVALID`.
 */
export function createModelProvider(spec: ModelSpec, env: ModelEnv, opts: ModelCallOptions = {}): ModelProvider {
  const common = { ...opts, model: spec.model };
  switch (spec.provider) {
    case 'scripted':
      return new ScriptedProvider(loadAgentScript(spec.model));
    case 'openai':
      return new OpenAIChatProvider('openai', {
        ...common,
        apiKey: needKey(env, 'OPENAI_API_KEY', spec),
        baseUrl: baseUrl(spec, env, 'OPENAI_BASE_URL') ?? OPENAI_URL,
      });
    case 'openai-compatible': {
      const url = baseUrl(spec, env, 'OPENAI_BASE_URL');
      if (!url)
        throw new HostError(
          ErrorCode.HOST_MODEL_CONFIG,
          `openai-compatible:${spec.model} needs the server's base URL`,
          { provider: spec.provider, env: 'OPENAI_BASE_URL' },
          {
            remediation:
              'Pass --base-url, e.g. http://127.0.0.1:11434/v1 (Ollama) or http://127.0.0.1:8080/v1 (llama.cpp).',
          },
        );
      return new OpenAIChatProvider('openai-compatible', {
        ...common,
        apiKey: env.OPENAI_API_KEY?.trim() || NO_KEY,
        baseUrl: url,
      });
    }
    case 'anthropic':
      return new AnthropicProvider({
        ...common,
        apiKey: needKey(env, 'ANTHROPIC_API_KEY', spec),
        baseUrl: baseUrl(spec, env, 'ANTHROPIC_BASE_URL') ?? ANTHROPIC_URL,
      });
  }
}
