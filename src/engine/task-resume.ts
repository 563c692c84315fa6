import { ErrorCode, HostError } from '../core/index.js';
import type { Ledger, LedgerEntry } from '../ledger/ledger-types.js';
import { FINAL_STATUSES } from '../mhs/wire-types.js';
import type { Receipt } from '../mhs/wire-types.js';
import type { Engine } from './engine.js';
import { parentActionChildren, runStep, sessionCapabilities } from './task-runner.js';
import type { StepResult, TaskProgress, TaskResult, TaskSpec, TaskStep } from './task-runner.js';

/** What an interrupted task recorded before the host stopped (found by {@link findTaskStart}). */
export interface TaskStart {
  taskId: string;
  parentSeq: number;
  traceparent: string | null;
}

/** The engine and ledger calls a resume needs. */
export interface TaskResumeDeps {
  engine: Pick<Engine, 'invoke' | 'reconcile' | 'handle'>;
  ledger: Pick<Ledger, 'append' | 'range' | 'byCommand'>;
}

/** Last `parent_action` start entry after `fromSeq` that matches `pred` (e.g. a run id and node id). */
export async function findTaskStart(
  ledger: Pick<Ledger, 'range'>,
  fromSeq: number,
  pred: (e: LedgerEntry) => boolean,
): Promise<TaskStart | undefined> {
  const start = (await ledger.range(fromSeq + 1))
    .filter((e) => e.kind === 'parent_action' && e.phase === 'start' && typeof e.task_id === 'string' && pred(e))
    .at(-1);
  if (!start) return undefined;
  return {
    taskId: start.task_id as string,
    parentSeq: start.seq,
    traceparent: typeof start.traceparent === 'string' ? start.traceparent : null,
  };
}

type Settled = { kind: 'done'; receipt: Receipt } | { kind: 'failed'; result: Omit<StepResult, 'index' | 'step'> };

/** Where one recorded command of the task ended: final receipt, never executed (safe to run), or still open. */
async function settle(deps: TaskResumeDeps, commandId: string): Promise<Settled | 'not_executed'> {
  const read = async (): Promise<Settled | 'not_executed' | undefined> => {
    const entries = await deps.ledger.byCommand(commandId);
    const final = entries
      .filter(
        (e) => e.kind === 'receipt' && FINAL_STATUSES.has((e.receipt as Receipt | undefined)?.status ?? 'unknown'),
      )
      .at(-1);
    if (final) {
      const receipt = final.receipt as Receipt;
      return receipt.status === 'completed'
        ? { kind: 'done', receipt }
        : { kind: 'failed', result: { status: 'final', commandId, receipt } };
    }
    // Wire contract §4: the endpoint has no record of it, or the host never sent it: nothing executed.
    if (entries.some((e) => e.kind === 'command.not_sent' || (e.kind === 'reconcile' && e.outcome === 'not_executed')))
      return 'not_executed';
    const fault = entries.find((e) => e.kind === 'error');
    if (fault) {
      const err = (fault.error ?? {}) as { mhs_code?: string; message?: string; remediation?: string };
      return {
        kind: 'failed',
        result: {
          status: 'error',
          commandId,
          error: {
            mhs_code: err.mhs_code ?? ErrorCode.HOST_INTERNAL,
            message: err.message ?? `command ${commandId} failed at the endpoint`,
            remediation: err.remediation ?? '',
          },
        },
      };
    }
    return undefined;
  };
  const first = await read();
  if (first) return first;
  // HOST-091: reconciled through the engine with the same command_id, never resent.
  // Issue 16: waits past the command's deadline when the endpoint has no record of it yet.
  await deps.engine.reconcile({ commandId, untilSettled: true }).catch(() => []);
  const again = await read();
  if (again) return again;
  const e = new HostError(ErrorCode.OUTCOME_UNKNOWN, `the outcome of ${commandId} is not settled yet`, {
    command_id: commandId,
  });
  return { kind: 'failed', result: { status: 'unknown', commandId, error: e.toWire() } };
}

/**
 * Resumes a multi-endpoint task the host was killed during (HOST-081, 091). The task's `command.intent`
 * entries (carrying its `task_id`) are matched to its steps by their `task_step`; intents recorded without one are
 * matched by order (the k-th intent on an endpoint is that endpoint's k-th step: a task runs each endpoint's steps
 * in order and stops an endpoint at its first incomplete step).
 * Each recorded command is settled from the ledger or reconciled (same command_id, never resent); a completed
 * receipt is that step's result and the step never runs again; a command the endpoint never executed runs as
 * a new command. Only the remaining steps run, through the governed call, under the task id, parent action
 * and traceparent recorded at the start; then the `parent_action` end entry is appended. A task whose end
 * entry is already recorded is rebuilt from the ledger and nothing runs.
 */
export async function resumeTask(
  deps: TaskResumeDeps,
  start: TaskStart,
  spec: { steps: TaskStep[]; runId?: string; nodeId?: string; runFence?: TaskSpec['runFence'] },
  opts: { signal?: AbortSignal; onProgress?: (p: TaskProgress) => void } = {},
): Promise<TaskResult & { resumed: true; rerun: number[] }> {
  const { taskId, parentSeq } = start;
  const after = await deps.ledger.range(parentSeq + 1);
  const intents = after.filter((e) => e.kind === 'command.intent' && e.task_id === taskId);
  const ended = after.find((e) => e.kind === 'parent_action' && e.phase === 'end' && e.task_id === taskId);
  const results: StepResult[] = spec.steps.map((step, index) => ({ index, step, status: 'skipped' }));
  const groups = new Map<string, number[]>();
  spec.steps.forEach((s, i) => groups.set(s.endpoint, [...(groups.get(s.endpoint) ?? []), i]));
  const caps = sessionCapabilities(spec.steps);
  const trace = start.traceparent ? { traceparent: start.traceparent } : undefined;
  const rerun: number[] = [];
  const recorded: Array<PromiseLike<number>> = [];

  // Intents name their step (`task_step`); an older task's are matched by order per endpoint instead.
  const byStep = new Map<number, LedgerEntry[]>();
  for (const e of intents)
    if (typeof e.task_step === 'number') byStep.set(e.task_step, [...(byStep.get(e.task_step) ?? []), e]);

  const runGroup = async (endpointId: string, indexes: number[]): Promise<void> => {
    const unnumbered = intents.filter((e) => e.endpoint_id === endpointId && typeof e.task_step !== 'number');
    let ok = true;
    for (const [k, i] of indexes.entries()) {
      if (!ok) break;
      const step = spec.steps[i] as TaskStep;
      const candidates = byStep.get(i) ?? (unnumbered[k] ? [unnumbered[k]] : []);
      // Oldest first: a command the endpoint never executed is passed over for the one that ran after it.
      let settled = false;
      for (const intent of candidates) {
        const commandId = intent.command_id as string;
        if (
          intent.endpoint_id !== step.endpoint ||
          intent.device_id !== step.device ||
          intent.capability_id !== step.capability
        )
          throw new HostError(
            ErrorCode.HOST_INTERNAL,
            `task ${taskId}: recorded command ${commandId} is not step ${i}`,
            {
              task_id: taskId,
              step: i,
              command_id: commandId,
            },
          );
        const s = await settle(deps, commandId);
        if (s === 'not_executed') continue;
        results[i] =
          s.kind === 'done'
            ? { index: i, step, status: 'final', commandId, receipt: s.receipt }
            : { index: i, step, ...s.result };
        ok = s.kind === 'done';
        settled = true;
        break;
      }
      if (settled) continue;
      if (ended || opts.signal?.aborted) break; // an ended task runs nothing more
      rerun.push(i);
      opts.onProgress?.({ type: 'step.start', index: i, step });
      const { result, recorded: rec } = await runStep((req) => deps.engine.invoke(req), step, i, {
        taskId,
        parentSeq,
        caps,
        trace,
        runId: spec.runId,
        nodeId: spec.nodeId,
        runFence: spec.runFence,
        signal: opts.signal,
      });
      if (rec) recorded.push(rec);
      results[i] = result;
      ok = result.status === 'final' && result.receipt?.status === 'completed';
      opts.onProgress?.({ type: 'step.done', result });
    }
  };

  try {
    await Promise.all([...groups].map(([endpointId, idx]) => runGroup(endpointId, idx)));
  } finally {
    // HOST-034: the task's sessions end with the task.
    await Promise.all(
      [...groups.keys()].map((id) =>
        deps.engine
          .handle(id)
          .then((ep) => ep.closeSessionScope(taskId))
          .catch(() => undefined),
      ),
    );
  }
  await Promise.allSettled(recorded);
  const ok = results.every((r) => r.status === 'final' && r.receipt?.status === 'completed');
  const traceparent = start.traceparent ?? '';
  if (ended) return { taskId, traceparent, parentSeq, endSeq: ended.seq, ok, steps: results, resumed: true, rerun };
  const end = await deps.ledger.append({
    kind: 'parent_action',
    phase: 'end',
    task_id: taskId,
    parent_seq: parentSeq,
    ...(start.traceparent ? { traceparent: start.traceparent } : {}),
    ok,
    resumed: true,
    children: parentActionChildren(results),
  });
  return { taskId, traceparent, parentSeq, endSeq: end.seq, ok, steps: results, resumed: true, rerun };
}
