import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import { ErrorCode, HostError } from '../../core/index.js';

// The mock provider extension of run-options.md (§"Mock provider extension", closes F1): `configurable.mockProvider`
// routes a run's AI calls through a deterministic mock instead of a model. This host implements the whole canonical
// catalog: `stream-text` (REQUIRED) and the RECOMMENDED `tool-calls`, `error` and `usage-only`.

/** The mock providers this host implements (advertised as `testing.mockProviders` while the test seams are on). */
export const MOCK_PROVIDERS = ['stream-text', 'tool-calls', 'error', 'usage-only'] as const;

/** One of {@link MOCK_PROVIDERS}. */
export type MockProviderId = (typeof MOCK_PROVIDERS)[number];

/** Token billing as the mock reports it (`meta.usage` of stream-modes.md §messages). */
export interface MockUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

/** A tool call in the S2 `meta.toolCalls` shape: `arguments` is the JSON-encoded argument object. */
export interface MockToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** The canonical finish reasons (run-options.md §`stream-text`). */
export type MockFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

/** `stream-text` as configured (run-options.md §`stream-text`), defaults applied. */
export interface StreamTextMock {
  id: 'stream-text';
  tokens: string[];
  delayMsPerToken: number;
  finishReason: MockFinishReason;
  usage: MockUsage;
  model: string;
}

/** `tool-calls` (run-options.md §`tool-calls`): the calls, emitted in order. */
export interface ToolCallsMock {
  id: 'tool-calls';
  toolCalls: MockToolCall[];
  delayMsPerToken: number;
}

/** `error` (run-options.md §`error`): the failure the AI activity ends with. */
export interface ErrorMock {
  id: 'error';
  code: string;
  message: string;
  retryable: boolean;
  failAfterMs: number;
}

/** `usage-only` (run-options.md §`usage-only`): no content, only `meta.usage`. */
export interface UsageOnlyMock {
  id: 'usage-only';
  usage: MockUsage;
}

/** A run's mock provider, its config checked and defaults applied. */
export type MockProvider = StreamTextMock | ToolCallsMock | ErrorMock | UsageOnlyMock;

const count = { type: 'integer', minimum: 0 };
const delay = { type: 'integer', minimum: 0, maximum: 5000 };
const USAGE = {
  type: 'object',
  properties: { promptTokens: count, completionTokens: count, totalTokens: count },
  required: ['promptTokens', 'completionTokens', 'totalTokens'],
};
const CONFIGS: Record<MockProviderId, object> = {
  'stream-text': {
    type: 'object',
    properties: {
      tokens: { type: 'array', items: { type: 'string' } },
      delayMsPerToken: delay,
      finishReason: { enum: ['stop', 'length', 'tool_calls', 'content_filter'] },
      usage: USAGE,
      model: { type: 'string', minLength: 1 },
    },
  },
  'tool-calls': {
    type: 'object',
    properties: {
      toolCalls: {
        type: 'array',
        minItems: 1,
        items: {
          type: 'object',
          properties: {
            id: { type: 'string', minLength: 1 },
            name: { type: 'string', minLength: 1 },
            arguments: { type: 'string' },
          },
          required: ['id', 'name', 'arguments'],
        },
      },
      delayMsPerToken: delay,
    },
    required: ['toolCalls'],
  },
  error: {
    type: 'object',
    properties: {
      code: { type: 'string', minLength: 1 },
      message: { type: 'string', minLength: 1 },
      retryable: { type: 'boolean' },
      failAfterMs: count,
    },
    required: ['code', 'message'],
  },
  'usage-only': { type: 'object', properties: { usage: USAGE }, required: ['usage'] },
};
const MOCK_PROVIDER = {
  type: 'object',
  properties: { id: { type: 'string', minLength: 1 }, config: { type: 'object' } },
  required: ['id'],
};

let validators: Map<string, ValidateFunction> | undefined;
function validate(which: 'mock' | MockProviderId, value: unknown, path: string): void {
  if (!validators) {
    const ajv = new Ajv2020({ strict: false });
    validators = new Map([['mock', ajv.compile(MOCK_PROVIDER)]]);
    for (const [id, schema] of Object.entries(CONFIGS)) validators.set(id, ajv.compile(schema));
  }
  const v = validators.get(which)!;
  if (v(value)) return;
  const e = v.errors?.[0];
  const at = `${path}${e?.instancePath ?? ''}`;
  throw new HostError(ErrorCode.VALIDATION_ERROR, `${at} ${e?.message ?? 'is invalid'}`, { path: at });
}

function isMockProviderId(id: unknown): id is MockProviderId {
  return (MOCK_PROVIDERS as readonly unknown[]).includes(id);
}

/**
 * Checks `configurable.mockProvider` of a new run (run-options.md §Authorization, §"Capabilities advertisement"):
 * none is fine; with no mock provider advertised (`catalog` undefined: this host's test seams are off, and it has no
 * test keys) it is `403 mock_provider_forbidden`; an id outside the catalog is `400 unsupported_mock_provider`; a
 * malformed one, or a config outside its provider's documented fields, is `400 validation_error`.
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

/** `arguments` must encode an argument object: a model-calling path hands the parsed object to its caller. */
function checkArguments(calls: readonly MockToolCall[]): void {
  calls.forEach((c, i) => {
    let v: unknown;
    try {
      v = JSON.parse(c.arguments);
    } catch {
      v = undefined;
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v)) {
      const path = `/configurable/mockProvider/config/toolCalls/${i}/arguments`;
      throw new HostError(ErrorCode.VALIDATION_ERROR, `${path} must be a JSON-encoded object`, { path });
    }
  });
}

/**
 * The run's mock provider with its defaults applied, or undefined when the run has none.
 * @throws HostError `validation_error` for a config outside the provider's fields (checked at run creation first).
 */
export function mockOf(configurable: Readonly<Record<string, unknown>> | undefined): MockProvider | undefined {
  const raw = configurable?.mockProvider as { id?: unknown; config?: Record<string, unknown> } | undefined;
  if (!isMockProviderId(raw?.id)) return undefined;
  const c = raw.config ?? {};
  validate(raw.id, c, '/configurable/mockProvider/config');
  switch (raw.id) {
    case 'stream-text': {
      const tokens = (c.tokens as string[] | undefined) ?? ['mock', ' response'];
      return {
        id: 'stream-text',
        tokens,
        delayMsPerToken: (c.delayMsPerToken as number | undefined) ?? 0,
        finishReason: (c.finishReason as MockFinishReason | undefined) ?? 'stop',
        // Omitted usage: completionTokens = tokens.length and promptTokens = 1 (run-options.md §`stream-text`).
        usage: (c.usage as MockUsage | undefined) ?? {
          promptTokens: 1,
          completionTokens: tokens.length,
          totalTokens: 1 + tokens.length,
        },
        model: (c.model as string | undefined) ?? 'mock-stream-text-v1',
      };
    }
    case 'tool-calls': {
      const toolCalls = (c.toolCalls as MockToolCall[]).map(({ id, name, arguments: args }) => ({
        id,
        name,
        arguments: args,
      }));
      checkArguments(toolCalls);
      return { id: 'tool-calls', toolCalls, delayMsPerToken: (c.delayMsPerToken as number | undefined) ?? 0 };
    }
    case 'error':
      return {
        id: 'error',
        code: c.code as string,
        message: c.message as string,
        retryable: (c.retryable as boolean | undefined) ?? false,
        failAfterMs: (c.failAfterMs as number | undefined) ?? 0,
      };
    case 'usage-only':
      return { id: 'usage-only', usage: c.usage as MockUsage };
  }
}

/** What a child run of a run with `configurable` inherits of it: the mock provider, if any (else nothing). */
export function inheritedMock(configurable: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return configurable.mockProvider === undefined ? {} : { mockProvider: configurable.mockProvider };
}
