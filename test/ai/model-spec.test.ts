// Guarantees (issue 15): `--model <provider>:<model>` parses the same way for every entry point, keeps a model id's
// own colons, refuses unknown providers, empty models and non-http base URLs with MHS.HOST.MODEL_CONFIG, and the
// factory reads OPENAI_* / ANTHROPIC_* with `--base-url` taking precedence; a missing key or base URL is
// MHS.HOST.MODEL_CONFIG naming the variable, never a key.
import { describe, expect, test } from 'vitest';
import { ErrorCode } from '../../src/core/index.js';
import { createModelProvider } from '../../src/ai/providers/create-model-provider.js';
import { parseModelSpec } from '../../src/ai/providers/model-spec.js';

const configError = expect.objectContaining({ code: ErrorCode.HOST_MODEL_CONFIG });

describe('model spec', () => {
  test('provider:model, with the model keeping its own colons and the base URL', () => {
    expect(parseModelSpec('openai:gpt-4.1')).toEqual({ provider: 'openai', model: 'gpt-4.1' });
    expect(parseModelSpec('openai-compatible:llama3.1:8b', { baseUrl: 'http://127.0.0.1:11434/v1' })).toEqual({
      provider: 'openai-compatible',
      model: 'llama3.1:8b',
      baseUrl: 'http://127.0.0.1:11434/v1',
    });
    expect(parseModelSpec('anthropic:claude-sonnet-4-5').provider).toBe('anthropic');
    expect(parseModelSpec('scripted:examples/agent-thermostat.json').model).toBe('examples/agent-thermostat.json');
  });

  test('unknown provider, no model, bad base URL → MHS.HOST.MODEL_CONFIG', () => {
    expect(() => parseModelSpec('gemini:pro')).toThrow(configError);
    expect(() => parseModelSpec('openai')).toThrow(configError);
    expect(() => parseModelSpec('openai:')).toThrow(configError);
    expect(() => parseModelSpec('openai:gpt-4.1', { baseUrl: 'ftp://x' })).toThrow(configError);
  });

  test('the factory: keys and base URLs from the environment, --base-url first', () => {
    const env = { OPENAI_API_KEY: 'sk-a', OPENAI_BASE_URL: 'http://10.0.0.1:8000/v1', ANTHROPIC_API_KEY: 'sk-b' };
    expect(createModelProvider(parseModelSpec('openai:gpt-4.1'), env).meter).toEqual({
      provider: 'openai',
      model: 'gpt-4.1',
    });
    expect(createModelProvider(parseModelSpec('openai-compatible:qwen'), env).name).toBe('openai-compatible:qwen');
    expect(createModelProvider(parseModelSpec('anthropic:claude-sonnet-4-5'), env).meter?.provider).toBe('anthropic');
    expect(createModelProvider(parseModelSpec('scripted:examples/agent-thermostat.json'), {}).name).toBe('scripted');
    expect(() => createModelProvider(parseModelSpec('openai:gpt-4.1'), {})).toThrow(
      expect.objectContaining({
        code: ErrorCode.HOST_MODEL_CONFIG,
        details: expect.objectContaining({ env: 'OPENAI_API_KEY' }),
      }),
    );
    expect(() => createModelProvider(parseModelSpec('openai-compatible:qwen'), {})).toThrow(
      expect.objectContaining({ details: expect.objectContaining({ env: 'OPENAI_BASE_URL' }) }),
    );
    expect(() => createModelProvider(parseModelSpec('openai:gpt-4.1'), { ...env, OPENAI_BASE_URL: 'nope' })).toThrow(
      configError,
    );
    // --base-url wins over a bad OPENAI_BASE_URL.
    const spec = parseModelSpec('openai:gpt-4.1', { baseUrl: 'http://127.0.0.1:1/v1' });
    expect(createModelProvider(spec, { ...env, OPENAI_BASE_URL: 'nope' }).name).toBe('openai:gpt-4.1');
  });
});
