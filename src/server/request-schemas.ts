import { lazyValidator } from '../core/lazy-validator.js';
import type { LazyValidator } from '../core/lazy-validator.js';
import { ErrorCode, HostError } from '../core/index.js';

/**
 * The v1 `configurable` reserved keys checked at create (v1 run-options.md §Reserved keys): an out-of-range
 * `recursionLimit` or `runTimeoutMs` (RFC 0058: "400 validation_error at run-create, never at runtime") is refused;
 * every other key is surfaced as given.
 */
const V1_CONFIGURABLE = {
  type: 'object',
  properties: {
    recursionLimit: { type: 'integer', minimum: 1 },
    runTimeoutMs: { type: 'integer', minimum: 1 },
  },
} as const;

/**
 * The query of the run-scoped interrupt resolve (v1 and v2): `interruptId` names one of several interrupts open at the
 * node at once (a host extension; the body stays the spec's).
 */
export const INTERRUPT_QUERY = {
  type: 'object',
  properties: { interruptId: { type: 'string', minLength: 1, maxLength: 512 } },
  additionalProperties: false,
} as const;

/** JSON Schemas of the request bodies this surface accepts (also published in the OpenAPI document). */
export const REQUEST_SCHEMAS = {
  CreateRunRequest: {
    type: 'object',
    required: ['workflowId'],
    properties: {
      workflowId: { type: 'string', minLength: 1, maxLength: 128 },
      inputs: { type: 'object' },
      tags: { type: 'array', items: { type: 'string', maxLength: 256 }, maxItems: 100 },
      metadata: { type: 'object' },
      configurable: V1_CONFIGURABLE,
    },
    additionalProperties: false,
  },
  CancelRunRequest: {
    type: 'object',
    properties: { reason: { type: 'string', maxLength: 1000 } },
    additionalProperties: false,
  },
  ResolveInterruptRequest: {
    type: 'object',
    properties: {
      action: { type: 'string', enum: ['accept', 'reject', 'refine', 'edit-accept'] },
      comment: { type: 'string' },
      feedback: { type: 'string' },
      refineFeedback: { type: 'object' },
      editedArtifactData: {},
      resumeValue: {},
      // A clarification's resume value may come bare (conformance coverage: `{answers: {q1: ...}}`).
      answers: { type: 'object' },
    },
    additionalProperties: false,
  },
  ListRunsQuery: {
    type: 'object',
    properties: {
      status: {
        type: 'string',
        enum: [
          'pending',
          'running',
          'paused',
          'waiting-approval',
          'waiting-input',
          'waiting-external',
          'completed',
          'failed',
          'cancelling',
          'cancelled',
        ],
      },
      workflowId: { type: 'string', minLength: 1, maxLength: 128 },
      limit: { type: 'string', pattern: '^(?:[1-9]|[1-9][0-9]|1[0-9][0-9]|200)$' },
      cursor: { type: 'string', minLength: 1, maxLength: 512 },
    },
    additionalProperties: false,
  },
  ForkRunRequest: {
    type: 'object',
    required: ['mode'],
    properties: {
      mode: { type: 'string', enum: ['replay', 'branch'] },
      fromSeq: { type: 'integer', minimum: 0 },
      runOptionsOverlay: {
        type: 'object',
        properties: {
          configurable: { type: 'object' },
          tags: { type: 'array', items: { type: 'string', maxLength: 256 }, maxItems: 100 },
          metadata: { type: 'object' },
        },
        additionalProperties: false,
      },
    },
    additionalProperties: false,
  },
} as const;

const compiled = new Map<string, LazyValidator>(
  Object.entries(REQUEST_SCHEMAS).map(([name, schema]) => [name, lazyValidator(schema, { allErrors: true })]),
);

/** Checks a body against one of {@link REQUEST_SCHEMAS}; raises `validation_error` with paths. */
export function checkBody<T>(name: keyof typeof REQUEST_SCHEMAS, body: unknown): T {
  const v = compiled.get(name)!;
  const value = body === undefined || body === null ? {} : body;
  if (!v(value)) {
    throw new HostError(ErrorCode.VALIDATION_ERROR, `the body is not a valid ${name}`, {
      errors: (v.errors ?? []).map((e) => {
        const missing =
          e.keyword === 'required' ? (e.params as { missingProperty?: string }).missingProperty : undefined;
        const extra =
          e.keyword === 'additionalProperties'
            ? (e.params as { additionalProperty?: string }).additionalProperty
            : undefined;
        const leaf = missing ?? extra;
        return {
          path: leaf ? `${e.instancePath}/${leaf}` : e.instancePath || '/',
          message: e.message ?? 'invalid',
          keyword: e.keyword,
        };
      }),
    });
  }
  return value as T;
}
