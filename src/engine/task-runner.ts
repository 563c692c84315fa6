import { ErrorCode, HostError, toHostError } from '../core/index.js';
import type { IdFactory, MhsWireError } from '../core/index.js';
import type { Ledger } from '../ledger/ledger-types.js';
import type { Receipt } from '../mhs/wire-types.js';
import type { InvokeRequest, InvokeResult } from './call-types.js';
import type { EndpointHandle } from './endpoint-handle.js';
import type { TaskEvidence } from './endpoint-evidence.js';
import type { EngineTracer } from './tracing.js';

/** One capability call of a task. */
export interface TaskStep {
  /** A label for progress output. */
  id?: string;
  endpoint: string;
  device: string;
  capability: string;
  input: Record<string, unknown>;
  expectedRevision?: number;
  deadlineMs?: number;
}

/** A multi-endpoint task (HOST-080, 081): steps run in order per endpoint, endpoints side by side. */
export interface TaskSpec {
  name?: string;
  steps: TaskStep[];
  /** Incoming W3C trace to continue (e.g. from an OpenWOP run). */
  traceparent?: string;
  runId?: string;
  nodeId?: string;
  /** The run-lease fence every step's intent is journaled under (issue 19, `InvokeRequest.runFence`). */
  runFence?: InvokeRequest['runFence'];
}

/** What happened to one step. `skipped`: an earlier step on the same endpoint did not complete. */
export interface StepResult {
  index: number;
  step: TaskStep;
  status: 'final' | 'running' | 'unknown' | 'error' | 'skipped';
  commandId?: string;
  receipt?: Receipt;
  error?: MhsWireError;
}

export interface TaskResult {
  taskId: string;
  traceparent: string;
  parentSeq: number;
  endSeq: number;
  /** Every step completed. */
  ok: boolean;
  steps: StepResult[];
  /**
   * The evidence this task produced, per touched endpoint: its receipts' chain links (engines with an artifact
   * store; HOST-051, issue 21). An endpoint with an error here makes `ok` false.
   */
  evidence?: Array<TaskEvidence | { endpointId: string; error: MhsWireError }>;
}

/** Live progress of a task, per endpoint. */
export type TaskProgress =
  | { type: 'step.start'; index: number; step: TaskStep }
  | { type: 'step.done'; result: StepResult }
  | { type: 'endpoint.done'; endpointId: string; ok: boolean };

export interface TaskDeps {
  ledger: Ledger;
  ids: IdFactory;
  tracer: EngineTracer;
  endpoint: (id: string) => EndpointHandle | undefined;
  invoke: (req: InvokeRequest) => Promise<InvokeResult>;
}

/** What a task's session on each (endpoint, device) must allow: the capabilities its steps call (HOST-034). */
export function sessionCapabilities(steps: readonly TaskStep[]): Map<string, Set<string>> {
  const caps = new Map<string, Set<string>>();
  for (const s of steps) {
    const k = `${s.endpoint}\u0000${s.device}`;
    caps.set(k, (caps.get(k) ?? new Set()).add(s.capability));
  }
  return caps;
}

/** The governed-call request of step `index` of a task: its session scope, parent action and trace (HOST-081). */
function stepRequest(
  step: TaskStep,
  index: number,
  t: {
    taskId: string;
    parentSeq: number;
    caps: Map<string, Set<string>>;
    trace?: InvokeRequest['trace'] | undefined;
    runId?: string | undefined;
    nodeId?: string | undefined;
    runFence?: InvokeRequest['runFence'] | undefined;
    signal?: AbortSignal | undefined;
  },
): InvokeRequest {
  return {
    endpointId: step.endpoint,
    deviceId: step.device,
    capabilityId: step.capability,
    input: step.input,
    taskId: t.taskId,
    sessionCapabilities: [...(t.caps.get(`${step.endpoint}\u0000${step.device}`) ?? [])],
    parentAction: { taskId: t.taskId, seq: t.parentSeq, step: index },
    ...(t.trace ? { trace: t.trace } : {}),
    ...(step.expectedRevision !== undefined ? { expectedRevision: step.expectedRevision } : {}),
    ...(step.deadlineMs !== undefined ? { deadlineMs: step.deadlineMs } : {}),
    ...(t.runId ? { runId: t.runId } : {}),
    ...(t.nodeId ? { nodeId: t.nodeId } : {}),
    // HOST-041 per step: steps on different endpoints wait side by side, and the run-and-node key would let the
    // second step's approval void the first's (input_changed); a step's retry after a restart still reuses its own.
    ...(t.runId && t.nodeId ? { approvalKey: `run:${t.runId}:${t.nodeId}:step:${index}` } : {}),
    ...(t.runFence ? { runFence: t.runFence } : {}),
    ...(t.signal ? { signal: t.signal } : {}),
  };
}

/**
 * Sends step `index` through the governed call and maps the outcome to its {@link StepResult}: the receipt, or
 * the error (`unknown` for `MHS.OUTCOME.UNKNOWN`, with the command id when one was allocated). Never throws.
 */
export async function runStep(
  invoke: (req: InvokeRequest) => Promise<InvokeResult>,
  step: TaskStep,
  index: number,
  t: Parameters<typeof stepRequest>[2],
): Promise<{ result: StepResult; recorded?: PromiseLike<number> }> {
  try {
    const res = await invoke(stepRequest(step, index, t));
    return {
      result: { index, step, status: res.outcome, commandId: res.commandId, receipt: res.receipt },
      recorded: res.recorded,
    };
  } catch (err) {
    const e = toHostError(err);
    const commandId = typeof e.details.command_id === 'string' ? e.details.command_id : undefined;
    return {
      result: {
        index,
        step,
        status: e.code === ErrorCode.OUTCOME_UNKNOWN ? 'unknown' : 'error',
        ...(commandId ? { commandId } : {}),
        error: e.toWire(),
      },
    };
  }
}

/**
 * Runs a multi-endpoint task through the governed call (HOST-080, 081, 082): checks every step first, records
 * a `parent_action` start entry, runs each endpoint's steps in order while endpoints proceed independently (a
 * stalled endpoint delays only its own steps), carries one W3C `traceparent` into every command, closes the
 * task's sessions (HOST-034) and records a `parent_action` end entry listing every child command and receipt.
 * Fails before anything is recorded with `MHS.HOST.ENDPOINT_UNKNOWN` or `MHS.SCHEMA.INVALID_INPUT`.
 */
export async function runTask(
  deps: TaskDeps,
  spec: TaskSpec,
  opts: { onProgress?: (p: TaskProgress) => void; signal?: AbortSignal } = {},
): Promise<TaskResult> {
  if (!spec.steps?.length) throw new HostError(ErrorCode.SCHEMA_INVALID_INPUT, 'a task needs at least one step', {});
  for (const [i, s] of spec.steps.entries()) {
    const ep = deps.endpoint(s.endpoint);
    if (!ep)
      throw new HostError(ErrorCode.HOST_ENDPOINT_UNKNOWN, `step ${i}: endpoint ${s.endpoint} is not connected`, {
        step: i,
        endpoint_id: s.endpoint,
      });
    ep.resolve(s.device, s.capability);
  }
  const caps = sessionCapabilities(spec.steps);
  const taskId = deps.ids.next('task');
  const trace = deps.tracer.start(
    `mhs.task ${spec.name ?? taskId}`,
    spec.traceparent ? { traceparent: spec.traceparent } : undefined,
    {
      'mhs.task_id': taskId,
    },
  );
  const start = await deps.ledger.append({
    kind: 'parent_action',
    phase: 'start',
    task_id: taskId,
    name: spec.name ?? null,
    traceparent: trace.traceparent,
    steps: spec.steps.map((s) => ({ endpoint_id: s.endpoint, device_id: s.device, capability_id: s.capability })),
    ...(spec.runId ? { run_id: spec.runId } : {}),
    ...(spec.nodeId ? { node_id: spec.nodeId } : {}),
  });
  const results: StepResult[] = spec.steps.map((step, index) => ({ index, step, status: 'skipped' }));
  const recorded: Array<PromiseLike<number>> = [];
  const groups = new Map<string, number[]>();
  spec.steps.forEach((s, i) => groups.set(s.endpoint, [...(groups.get(s.endpoint) ?? []), i]));

  const runGroup = async (endpointId: string, indexes: number[]): Promise<void> => {
    let ok = true;
    for (const i of indexes) {
      if (!ok || opts.signal?.aborted) break;
      const step = spec.steps[i] as TaskStep;
      opts.onProgress?.({ type: 'step.start', index: i, step });
      const { result: r, recorded: rec } = await runStep(deps.invoke, step, i, {
        taskId,
        parentSeq: start.seq,
        caps,
        trace,
        runId: spec.runId,
        nodeId: spec.nodeId,
        runFence: spec.runFence,
        signal: opts.signal,
      });
      if (rec) recorded.push(rec);
      ok = r.status === 'final' && r.receipt?.status === 'completed';
      results[i] = r;
      opts.onProgress?.({ type: 'step.done', result: r });
    }
    opts.onProgress?.({ type: 'endpoint.done', endpointId, ok });
  };

  try {
    await Promise.all([...groups].map(([endpointId, idx]) => runGroup(endpointId, idx)));
  } finally {
    // HOST-034: the task's sessions end with the task.
    await Promise.all(
      [...groups.keys()].map((id) =>
        deps
          .endpoint(id)
          ?.closeSessionScope(taskId)
          .catch(() => undefined),
      ),
    );
  }
  // Children first: every receipt is durable before the parent action closes (HOST-081).
  await Promise.allSettled(recorded);
  const ok = results.every((r) => r.status === 'final' && r.receipt?.status === 'completed');
  const end = await deps.ledger.append({
    kind: 'parent_action',
    phase: 'end',
    task_id: taskId,
    parent_seq: start.seq,
    traceparent: trace.traceparent,
    ok,
    children: parentActionChildren(results),
  });
  deps.tracer.end(trace, ok ? undefined : 'task_incomplete');
  return { taskId, traceparent: trace.traceparent, parentSeq: start.seq, endSeq: end.seq, ok, steps: results };
}

/** The `children` of a `parent_action` end entry: one line per step, linking its command and receipt (HOST-081). */
export function parentActionChildren(results: readonly StepResult[]): Array<Record<string, unknown>> {
  return results.map((r) => ({
    step: r.index,
    endpoint_id: r.step.endpoint,
    device_id: r.step.device,
    capability_id: r.step.capability,
    command_id: r.commandId ?? null,
    outcome: r.status,
    status: r.receipt?.status ?? null,
    receipt_id: r.receipt?.receipt_id ?? null,
    error_code: r.error?.mhs_code ?? null,
  }));
}
