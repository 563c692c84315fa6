/**
 * JSON Schema validation (ajv, draft 2020-12) of tool arguments. A failure is the fault
 * `MHS.SCHEMA.INVALID_INPUT` with `details.errors` (wire contract §4).
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { ErrorCode, HostError } from '../core/index.js';
import type { CapabilityBinding } from '../mhs/wire-types.js';

// Made on the first validation, not at a simulator's start (~15 ms of CPU per stdio child).
let ajv: Ajv2020 | undefined;
const cache = new WeakMap<object, ValidateFunction>();

function compiled(schema: object): ValidateFunction {
  let v = cache.get(schema);
  if (!v) {
    v = (ajv ??= new Ajv2020({ allErrors: true, strict: false })).compile(schema);
    cache.set(schema, v);
  }
  return v;
}

/** Throws `MHS.SCHEMA.INVALID_INPUT` when `value` does not match `schema`. */
export function validateAgainst(schema: object, value: unknown, what: string): void {
  const v = compiled(schema);
  if (!v(value)) {
    throw new HostError(
      ErrorCode.SCHEMA_INVALID_INPUT,
      `${what}: arguments do not match the schema`,
      { errors: (v.errors ?? []).map((e) => ({ path: e.instancePath, keyword: e.keyword, message: e.message ?? '' })) },
      { remediation: 'send arguments that match the tool input schema' },
    );
  }
}

/** Validates a capability input (without `_mhs`) against the binding's `input_schema`. */
export function validateCapabilityInput(binding: CapabilityBinding, input: Record<string, unknown>): void {
  validateAgainst(binding.input_schema, input, binding.capability_id);
}

/** Schema of the `_mhs` control fields (§4). */
export const CONTROL_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  description: 'MHS control fields, filled by the host; a plain MCP client may omit them.',
  properties: {
    session_id: { type: 'string', minLength: 1, maxLength: 200 },
    command_id: { type: 'string', minLength: 1, maxLength: 200 },
    permit_id: { type: 'string', minLength: 1, maxLength: 200 },
    deadline_ms: { type: 'integer', minimum: 1 },
    expected_revision: { type: 'integer', minimum: 0 },
    resource: { type: 'string', minLength: 1, maxLength: 200 },
  },
} as const;
