import { ErrorCode, HostError } from '../core/index.js';
import type { WorkflowDefinition } from './types.js';

/** A run's variables at start: the definition's defaults overlaid with `inputs`; `validation_error` when a required one is missing. */
export function initialVariables(def: WorkflowDefinition, inputs: Record<string, unknown>): Record<string, unknown> {
  const vars = variableDefaults(def);
  const missing = def.variables.filter((v) => v.required && vars[v.name] === undefined && inputs[v.name] === undefined);
  if (missing.length) {
    throw new HostError(ErrorCode.VALIDATION_ERROR, 'required workflow variables are missing from inputs', {
      errors: missing.map((v) => ({ path: `/inputs/${v.name}`, message: 'required', keyword: 'required' })),
    });
  }
  return { ...vars, ...inputs };
}

/** The declared default values of a workflow's variables. */
export function variableDefaults(def: WorkflowDefinition): Record<string, unknown> {
  const vars: Record<string, unknown> = {};
  for (const v of def.variables) if (v.defaultValue !== undefined) vars[v.name] = v.defaultValue;
  return vars;
}

/** A run to insert: its definition, starting values and request identity (see `RunManager.startPrepared`). */
export interface PreparedRun {
  def: WorkflowDefinition;
  inputs: Record<string, unknown>;
  variables: Record<string, unknown>;
  principal: string | null;
  idempotencyKey: string | null;
  requestDigest: string | null;
  tags: string[];
  metadata: Record<string, unknown>;
  configurable: Record<string, unknown>;
}

/** Where a child run hangs: its parent run and node, and the trace it continues. */
export interface ParentLink {
  runId: string;
  nodeId: string;
  traceparent: string | null;
}
