import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import { ErrorCode, HostError } from '../../core/index.js';
import type { CreateRunRequest } from '../types.js';
import { fromV2Configurable } from './configurable.js';
import { V2_TENANT } from './ids.js';

/**
 * The v2 `createRun` body fields this host does not honour yet: each is refused with `validation_error` and
 * `details.field` rather than accepted and ignored (v2 runs.md §Create).
 */
export const UNSUPPORTED_CREATE_FIELDS = [
  'residency',
  'scopeId',
  'callbackUrl',
  'mode',
  'evalSuiteRef',
  'agentId',
] as const;

// The closed body (runs.md §Create, `unevaluatedProperties: false`) less the fields above; tags per §tags.
const BODY_SCHEMA = {
  type: 'object',
  required: ['workflowId'],
  properties: {
    workflowId: { type: 'string', pattern: '^[A-Za-z0-9._~:-]{1,128}$' },
    inputs: { type: 'object' },
    tenantId: { type: 'string' },
    tags: { type: 'array', items: { type: 'string', maxLength: 256 }, maxItems: 100 },
    metadata: { type: 'object' },
    // Checked against the vendored closed schema by fromV2Configurable (configurable.ts).
    configurable: { type: 'object' },
    ...Object.fromEntries(UNSUPPORTED_CREATE_FIELDS.map((f) => [f, {}])),
  },
  additionalProperties: false,
} as const;

let validate: ValidateFunction | undefined;

/**
 * Maps a v2 `POST /runs` body to the engine's create request. Raises `validation_error` (with `details.errors`, or
 * `details.field` for a field not honoured here), `id_tenant_mismatch` when `tenantId` is not the caller's, and the
 * refusals of {@link fromV2Configurable}.
 */
export function toCreateRunRequest(body: unknown): CreateRunRequest {
  validate ??= new Ajv2020({ allErrors: true, strict: false }).compile(BODY_SCHEMA);
  if (!validate(body ?? {})) {
    const errors = (validate.errors ?? []).map((e) => ({ path: e.instancePath || '/', message: e.message ?? '' }));
    throw new HostError(ErrorCode.VALIDATION_ERROR, 'the createRun body is not valid', { errors });
  }
  const b = body as Record<string, unknown>;
  for (const field of UNSUPPORTED_CREATE_FIELDS)
    if (b[field] !== undefined)
      throw new HostError(ErrorCode.VALIDATION_ERROR, `${field} is not accepted by this host under major 2`, { field });
  if (b.tenantId !== undefined && b.tenantId !== V2_TENANT)
    throw new HostError(ErrorCode.ID_TENANT_MISMATCH, 'tenantId is not the caller tenant');
  const req: CreateRunRequest = { workflowId: b.workflowId as string };
  if (b.inputs !== undefined) req.inputs = b.inputs as Record<string, unknown>;
  if (b.tags !== undefined) req.tags = b.tags as string[];
  if (b.metadata !== undefined) req.metadata = b.metadata as Record<string, unknown>;
  if (b.configurable !== undefined) req.configurable = fromV2Configurable(b.configurable);
  return req;
}
