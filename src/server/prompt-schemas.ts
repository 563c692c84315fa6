import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import { ErrorCode, HostError } from '../core/index.js';
import { schemaId } from '../openwop/schemas.js';

const TEMPLATE_ID = '^[a-z0-9][a-z0-9._-]{0,127}$';
const SEMVER = '^\\d+\\.\\d+\\.\\d+(?:-[0-9A-Za-z.-]+)?(?:\\+[0-9A-Za-z.-]+)?$';

/**
 * Query and body shapes of `/v1/prompts*` (RFC 0028 §A) beyond the OpenWOP schemas: the PromptTemplate bodies and
 * the render `ref` are checked against prompt-template.schema.json / prompt-ref.schema.json themselves.
 */
export const PROMPT_REQUEST_SCHEMAS = {
  ListPromptTemplatesQuery: {
    type: 'object',
    properties: {
      kind: { type: 'string', enum: ['system', 'user', 'few-shot', 'schema-hint'] },
      tag: {
        anyOf: [
          { type: 'string', minLength: 1, maxLength: 64 },
          { type: 'array', items: { type: 'string', minLength: 1, maxLength: 64 }, maxItems: 32 },
        ],
      },
      modelClass: { type: 'string', minLength: 1 },
      source: { type: 'string', enum: ['host', 'pack', 'user'] },
      cursor: { type: 'string', minLength: 1, maxLength: 512 },
      limit: { type: 'string', pattern: '^(?:[1-9]|[1-9][0-9]|1[0-9][0-9]|200)$' },
    },
    additionalProperties: false,
  },
  GetPromptTemplateQuery: {
    type: 'object',
    properties: {
      version: { type: 'string', pattern: SEMVER },
      libraryId: { type: 'string', pattern: TEMPLATE_ID },
    },
    additionalProperties: false,
  },
  TemplateIdParam: {
    type: 'object',
    required: ['templateId'],
    properties: { templateId: { type: 'string', pattern: TEMPLATE_ID } },
  },
  RenderPromptRequest: {
    type: 'object',
    required: ['ref', 'variables'],
    properties: {
      ref: { description: `A PromptRef (${schemaId('prompt-ref')})` },
      variables: { type: 'object', description: 'Bindings keyed by PromptVariable.name' },
      contentTrust: { type: 'string', enum: ['trusted', 'untrusted'] },
    },
    additionalProperties: false,
  },
  RenderPromptResponse: {
    type: 'object',
    required: ['hash', 'refs', 'variableHashes'],
    properties: {
      composed: { type: 'string', description: 'Present only under capabilities.prompts.observability full' },
      hash: { type: 'string', pattern: '^sha256:[0-9a-f]{64}$' },
      refs: { type: 'array', items: { type: 'string' } },
      variableHashes: { type: 'object', additionalProperties: { type: 'string', pattern: '^sha256:[0-9a-f]{64}$' } },
      contentTrust: { type: 'string', enum: ['trusted', 'untrusted'] },
    },
  },
} as const;

type Name = Exclude<keyof typeof PROMPT_REQUEST_SCHEMAS, 'RenderPromptResponse'>;

const ajv = new Ajv2020({ strict: false, allErrors: true });
const compiled = new Map<string, ValidateFunction>();

/** Checks a query, path or body against one of {@link PROMPT_REQUEST_SCHEMAS}; raises `validation_error` with paths. */
export function checkPromptInput<T>(name: Name, value: unknown, where: string): T {
  let v = compiled.get(name);
  if (!v) {
    v = ajv.compile(PROMPT_REQUEST_SCHEMAS[name]);
    compiled.set(name, v);
  }
  const input = value === undefined || value === null ? {} : value;
  if (!v(input)) {
    throw new HostError(ErrorCode.VALIDATION_ERROR, `the ${where} is not a valid ${name}`, {
      errors: (v.errors ?? []).map((e) => {
        const p = e.params as { missingProperty?: string; additionalProperty?: string };
        const leaf = e.keyword === 'required' ? p.missingProperty : p.additionalProperty;
        return {
          path: `${where}:${leaf ? `${e.instancePath}/${leaf}` : e.instancePath || '/'}`,
          message: e.message ?? 'invalid',
          keyword: e.keyword,
        };
      }),
    });
  }
  return input as T;
}
