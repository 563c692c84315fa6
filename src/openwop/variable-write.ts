import { Ajv2020 } from 'ajv/dist/2020.js';
import { ErrorCode, HostError } from '../core/index.js';
import type { WorkflowDefinition } from './types.js';

const ajv = new Ajv2020({ strict: false, allErrors: true });

/**
 * The JSON Schema a write to `def`'s variables must match: at least one name, only names the definition declares,
 * each value of its declared `type` (the declared types are JSON Schema type names).
 */
export function variableWriteSchema(def: WorkflowDefinition): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const v of def.variables) properties[v.name] = { type: v.type };
  return { type: 'object', minProperties: 1, properties, additionalProperties: false };
}

/**
 * Checks a write of `values` to a run of `def` as a whole, so a refused write changes nothing. Raises
 * `validation_error` with `errors: [{path, message, keyword}]` (path `/variables/<name>`).
 */
export function checkVariableWrite(def: WorkflowDefinition, values: Record<string, unknown>): void {
  const validate = ajv.compile(variableWriteSchema(def));
  if (validate(values)) return;
  throw new HostError(ErrorCode.VALIDATION_ERROR, `not a valid write to the variables of ${def.id}`, {
    errors: (validate.errors ?? []).map((e) => {
      const extra =
        e.keyword === 'additionalProperties'
          ? `/${(e.params as { additionalProperty: string }).additionalProperty}`
          : '';
      const message = extra ? 'the workflow declares no such variable' : (e.message ?? 'invalid');
      return { path: `/variables${e.instancePath}${extra}`, message, keyword: e.keyword };
    }),
  });
}
