/**
 * TypeScript shapes of the OpenWOP documents the host reads and writes. The JSON Schemas in
 * `vendor/openwop/schemas` are the contract; these types only describe what the code touches.
 */

/** A node input port value (workflow-definition `PortValue`). */
export type PortValue =
  | { type: 'static'; value: unknown }
  | { type: 'expression'; expression: string }
  | { type: 'connection'; nodeId: string; outputKey: string; optional?: boolean }
  | { type: 'variable'; variableName: string; optional?: boolean };

export interface WorkflowNode {
  id: string;
  typeId: string;
  name: string;
  position: { x: number; y: number };
  config: Record<string, unknown>;
  inputs: Record<string, PortValue>;
  disabled?: boolean;
  [k: string]: unknown;
}

/** Edge trigger rules as workflow-definition.schema.json defines them. */
export type TriggerRule = 'all_success' | 'any_success' | 'all_complete' | 'none_failed' | 'any_failed';

export interface EdgeCondition {
  type?: 'expression' | 'equals' | 'notEquals' | 'contains' | 'regex' | 'truthy' | 'falsy';
  left?: string;
  right?: unknown;
  expression?: string;
}

export interface WorkflowEdge {
  id: string;
  sourceNodeId: string;
  targetNodeId: string;
  sourceOutput?: string;
  targetInput?: string;
  condition?: EdgeCondition;
  triggerRule?: TriggerRule;
}

export interface WorkflowVariable {
  name: string;
  type: 'string' | 'number' | 'boolean' | 'object' | 'array';
  required?: boolean;
  defaultValue?: unknown;
  sensitive?: boolean;
}

export interface WorkflowDefinition {
  id: string;
  name: string;
  version: string;
  description?: string;
  nodes: WorkflowNode[];
  edges: WorkflowEdge[];
  triggers: Array<{ id: string; type: string; enabled?: boolean }>;
  variables: WorkflowVariable[];
  metadata: Record<string, unknown>;
  settings: { timeout?: number; maxRetries?: number; maxLoopbackIterations?: number; [k: string]: unknown };
  [k: string]: unknown;
}

/** RunSnapshot `status` values (run-snapshot.schema.json). */
export type RunStatus =
  | 'pending'
  | 'running'
  | 'paused'
  | 'waiting-approval'
  | 'waiting-input'
  | 'waiting-external'
  | 'completed'
  | 'failed'
  | 'cancelling'
  | 'cancelled';

/** Statuses after which a run never changes again. */
export const TERMINAL_STATUSES: ReadonlySet<RunStatus> = new Set(['completed', 'failed', 'cancelled']);

/** Terminal event types; exactly one is appended per run, last. */
export const TERMINAL_EVENT_TYPES: ReadonlySet<string> = new Set(['run.completed', 'run.failed', 'run.cancelled']);

/** A persisted run event (run-event.schema.json `RunEventDoc`). */
export interface RunEvent {
  eventId: string;
  runId: string;
  sequence: number;
  type: string;
  payload: Record<string, unknown>;
  timestamp: string;
  nodeId?: string;
  causationId?: string;
  schemaVersion?: number;
  engineVersion?: string;
}

/** What a writer supplies; the log adds `eventId`, `runId`, `sequence` and `timestamp`. */
export interface RunEventInput {
  type: string;
  payload: Record<string, unknown>;
  nodeId?: string;
  causationId?: string;
}

/** `{code, message, details?}` as run.failed / node.failed carry it. */
export interface RunError {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

/** The stored run row. */
export interface RunRecord {
  runId: string;
  workflowId: string;
  workflowVersion: string;
  status: RunStatus;
  parentRunId: string | null;
  parentNodeId: string | null;
  inputs: Record<string, unknown>;
  variables: Record<string, unknown>;
  tags: string[];
  metadata: Record<string, unknown>;
  configurable: Record<string, unknown>;
  principal: string | null;
  idempotencyKey: string | null;
  traceparent: string | null;
  error: RunError | null;
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
  lastSequence: number;
}

/** Body of `POST /v1/runs` (RunOptions subset the host honours). */
export interface CreateRunRequest {
  workflowId: string;
  inputs?: Record<string, unknown>;
  tags?: string[];
  metadata?: Record<string, unknown>;
  configurable?: Record<string, unknown>;
}
