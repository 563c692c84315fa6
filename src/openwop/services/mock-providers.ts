import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import { ErrorCode, HostError } from '../../core/index.js';

// The mock provider extension of run-options.md (§"Mock provider extension", closes F1): `configurable.mockProvider`
// routes a run's AI calls through a deterministic mock instead of a model. This host implements `stream-text`, the
// one provider a v1.0 conformance claim requires.

/** The mock providers this host implements (advertised as `testing.mockProviders` while the test seams are on). */
export const MOCK_PROVIDERS = ['stream-text'] as const;

/** `stream-text` as configured (run-options.md §`stream-text`), defaults applied. */
export interface StreamTextMock {
  id: 'stream-text';
  tokens: string[];
  delayMsPerToken: number;
  finishReason: 'stop' | 'length' | 'tool_calls' | 'content_filter';
  usage: { promptTokens: number; completionTokens: number; totalTokens: number };
  model: string;
}

const count = { type: 'integer', minimum: 0 };
const STREAM_TEXT_CONFIG = {
  type: 'object',
  properties: {
    tokens: { type: 'array', items: { type: 'string' } },
    delayMsPerToken: { type: 'integer', minimum: 0, maximum: 5000 },
    finishReason: { enum: ['stop', 'length', 'tool_calls', 'content_filter'] },
    usage: {
      type: 'object',
      properties: { promptTokens: count, completionTokens: count, totalTokens: count },
      required: ['promptTokens', 'completionTokens', 'totalTokens'],
    },
    model: { type: 'string', minLength: 1 },
  },
};
const MOCK_PROVIDER = {
  type: 'object',
  properties: { id: { type: 'string', minLength: 1 }, config: { type: 'object' } },
  required: ['id'],
};

let validators: { mock: ValidateFunction; streamText: ValidateFunction } | undefined;
function validate(which: 'mock' | 'streamText', value: unknown, path: string): void {
  if (!validators) {
    const ajv = new Ajv2020({ strict: false });
    validators = { mock: ajv.compile(MOCK_PROVIDER), streamText: ajv.compile(STREAM_TEXT_CONFIG) };
  }
  const v = validators[which];
  if (v(value)) return;
  const e = v.errors?.[0];
  const at = `${path}${e?.instancePath ?? ''}`;
  throw new HostError(ErrorCode.VALIDATION_ERROR, `${at} ${e?.message ?? 'is invalid'}`, { path: at });
}

/**
 * Checks `configurable.mockProvider` of a new run (run-options.md §Authorization, §"Capabilities advertisement"):
 * none is fine; with no mock provider advertised (`catalog` undefined: this host's test seams are off, and it has no
 * test keys) it is `403 mock_provider_forbidden`; an id outside the catalog is `400 unsupported_mock_provider`; a
 * malformed one, or a `stream-text` config outside its documented fields, is `400 validation_error`.
 */
export function checkMockProvider(
  configurable: Readonly<Record<string, unknown>> | undefined,
  catalog: readonly string[] | undefined,
): void {
  const raw = configurable?.mockProvider;
  if (raw === undefined) return;
  validate('mock', raw, '/configurable/mockProvider');
  const { id } = raw as { id: string };
  const details = { requestedProvider: id, supportedProviders: [...(catalog ?? MOCK_PROVIDERS)] };
  if (!catalog)
    throw new HostError(
      ErrorCode.MOCK_PROVIDER_FORBIDDEN,
      'mock providers are served only by a host started with --enable-test-seams (this host has no test keys)',
      details,
    );
  if (!catalog.includes(id))
    throw new HostError(ErrorCode.UNSUPPORTED_MOCK_PROVIDER, `no mock provider ${id} here`, details);
  mockOf(configurable);
}

/** The run's mock provider with its defaults applied, or undefined when the run has none. */
export function mockOf(configurable: Readonly<Record<string, unknown>> | undefined): StreamTextMock | undefined {
  const raw = configurable?.mockProvider as { id?: unknown; config?: Record<string, unknown> } | undefined;
  if (raw?.id !== 'stream-text') return undefined;
  const c = raw.config ?? {};
  validate('streamText', c, '/configurable/mockProvider/config');
  const tokens = (c.tokens as string[] | undefined) ?? ['mock', ' response'];
  return {
    id: 'stream-text',
    tokens,
    delayMsPerToken: (c.delayMsPerToken as number | undefined) ?? 0,
    finishReason: (c.finishReason as StreamTextMock['finishReason'] | undefined) ?? 'stop',
    // Omitted usage: completionTokens = tokens.length and promptTokens = 1 (run-options.md §`stream-text`).
    usage: (c.usage as StreamTextMock['usage'] | undefined) ?? {
      promptTokens: 1,
      completionTokens: tokens.length,
      totalTokens: 1 + tokens.length,
    },
    model: (c.model as string | undefined) ?? 'mock-stream-text-v1',
  };
}
