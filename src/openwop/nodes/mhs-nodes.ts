import type { DisclosureRequest, Engine, InvokeResult, TaskProgress, TaskStep } from '../../engine/index.js';
import type { ApprovalRequest } from '../../policy/index.js';
import type { Ledger, LedgerEntry } from '../../ledger/index.js';
import { findTaskStart, resumeTask } from '../../engine/task-resume.js';
import { sessionDisclosureText } from '../../engine/session-disclosure.js';
import { NodeFailure } from '../node-registry.js';
import { watchApprovals, withdrawOnCancel } from './mhs-approvals.js';
import type { ApprovalLabel, MhsApprovals } from './mhs-approvals.js';
import type { NodeContext, NodeModule, NodeResult } from '../node-registry.js';

/** What the MHS nodes need from the host: the engine (governed call, tasks, reconciliation) and its ledger. */
export interface MhsNodeDeps {
  engine: Pick<Engine, 'invoke' | 'runTask' | 'reconcile' | 'endpoint' | 'handle'>;
  ledger: Pick<Ledger, 'head' | 'range' | 'byCommand' | 'append'>;
  /** The policy gate's approvals, so a wait for an operator shows as `waiting-approval`. */
  approvals?: MhsApprovals;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.length ? v : undefined;
}

function obj(v: unknown): Record<string, unknown> {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/**
 * HOST-003: a session's disclosure is an event on the run before the node's first call on a device: a
 * `log.appended` (warn) with the disclosure text and, in `fields.disclosure`, its structured form.
 */
function runDisclosure(ctx: NodeContext): DisclosureRequest {
  return {
    surface: 'workflow',
    show: async (d) => {
      await ctx.emit([
        {
          type: 'log.appended',
          payload: {
            level: 'warn',
            message: sessionDisclosureText(d),
            nodeId: ctx.node.id,
            fields: { disclosure: { ...d } },
          },
        },
      ]);
    },
  };
}

/** Ledger position recorded before the call, so a resumed node only looks at entries it may have caused. */
async function ledgerMark(ctx: NodeContext, deps: MhsNodeDeps): Promise<number> {
  const head = (await deps.ledger.head()).seq;
  return ctx.checkpoint('mhs.ledgerFrom', () => head);
}

async function findEntries(deps: MhsNodeDeps, from: number, pred: (e: LedgerEntry) => boolean): Promise<LedgerEntry[]> {
  return (await deps.ledger.range(from + 1)).filter(pred);
}

function receiptOutputs(
  receipt: Record<string, unknown>,
  commandId: string,
  entry: LedgerEntry | undefined,
): NodeResult {
  const ledger = entry ? { seq: entry.seq, digest: entry.digest } : undefined;
  const status = receipt.status;
  if (status !== 'completed' && status !== 'accepted' && status !== 'running') {
    const err = obj(receipt.error);
    throw new NodeFailure(
      str(err.mhs_code) ?? 'mhs_command_failed',
      str(err.message) ?? `command ${commandId} ${String(status)}`,
      { commandId, receipt },
      {
        commandId,
        receipt,
        ...(ledger ? { ledger } : {}),
      },
    );
  }
  // The full receipt (HOST-033, 072) plus the ledger entry that holds it.
  return {
    outputs: { receipt, commandId, ...(ledger ? { ledger } : {}) },
    completedInfo: { commandId, ...(ledger ? { ledger } : {}) },
  };
}

/**
 * After a restart: the intent this node journaled (found by run/node id after the recorded mark)
 * is reconciled through the engine, never resent; the receipt it settles to is the node's result.
 * Returns undefined when no intent was journaled, or when its command never executed (`command.not_sent`, or a
 * `reconcile` that found no record past the deadline): a new send is safe.
 */
async function settleEarlier(ctx: NodeContext, deps: MhsNodeDeps, from: number): Promise<NodeResult | undefined> {
  const intents = await findEntries(
    deps,
    from,
    (e) => e.kind === 'command.intent' && e.run_id === ctx.runId && e.node_id === ctx.node.id,
  );
  const intent = intents.at(-1);
  if (!intent) return undefined;
  const commandId = intent.command_id as string;
  let entries = await deps.ledger.byCommand(commandId);
  if (!entries.some((e) => e.kind === 'receipt')) {
    // Issue 16: waits past the command's deadline when the endpoint has no record of it yet.
    await deps.engine.reconcile({ commandId, untilSettled: true });
    entries = await deps.ledger.byCommand(commandId);
  }
  const receiptEntry = entries.filter((e) => e.kind === 'receipt').at(-1);
  if (receiptEntry) return receiptOutputs(obj(receiptEntry.receipt), commandId, receiptEntry);
  // HOST-091: never sent, or no record at the endpoint past its deadline: nothing executed, a new command is safe.
  if (entries.some((e) => e.kind === 'command.not_sent' || (e.kind === 'reconcile' && e.outcome === 'not_executed')))
    return undefined;
  const fault = entries.find((e) => e.kind === 'error');
  if (fault) {
    const err = obj(fault.error);
    throw new NodeFailure(
      str(err.mhs_code) ?? 'mhs_command_failed',
      str(err.message) ?? `command ${commandId} failed at the endpoint`,
      { commandId, error: err },
    );
  }
  throw new NodeFailure('MHS.OUTCOME.UNKNOWN', `command ${commandId} is not settled yet`, { commandId });
}

/**
 * `mhs.invoke`: one governed call (config `endpoint`, `device`, `capability`, `input`, optional
 * `deadlineMs`, `expectedRevision`, `resource`; an `input` node input overrides `config.input`).
 * Outputs the full receipt and the ledger `seq`/`digest` of its entry. The ledger entries carry the
 * run id, node id and the node span's traceparent. Approvals happen inside the governed call (the
 * policy gate waits for the operator). Resumed after a restart, it reconciles instead of resending.
 */
export function mhsInvokeNode(deps: MhsNodeDeps): NodeModule {
  return {
    typeId: 'mhs.invoke',
    validate: (node) =>
      ['endpoint', 'device', 'capability']
        .filter((k) => !str(node.config[k]))
        .map((k) => ({ path: `/config/${k}`, message: 'required string' })),
    async execute(ctx) {
      const c = ctx.node.config;
      const from = await ledgerMark(ctx, deps);
      if (ctx.resumed) {
        const earlier = await settleEarlier(ctx, deps, from);
        if (earlier) return earlier;
      }
      const input = { ...obj(c.input), ...obj(ctx.inputs.input) };
      const watch = deps.approvals ? watchApprovals(ctx, deps.approvals) : undefined;
      // Cancelling the run withdraws a call still waiting for its approval; a call that was approved
      // (or needed none) is not aborted: it settles and its receipt is recorded (never abandoned).
      const abort = new AbortController();
      const cancel = withdrawOnCancel(ctx, deps.approvals, watch, abort);
      const res: InvokeResult = await deps.engine
        .invoke({
          endpointId: c.endpoint as string,
          deviceId: c.device as string,
          capabilityId: c.capability as string,
          input,
          runId: ctx.runId,
          nodeId: ctx.node.id,
          // Issue 19: the intent is journaled only while this process still drives the run.
          ...(ctx.runFence ? { runFence: ctx.runFence } : {}),
          ...(ctx.traceparent ? { trace: { traceparent: ctx.traceparent } } : {}),
          ...(typeof c.deadlineMs === 'number' ? { deadlineMs: c.deadlineMs } : {}),
          ...(typeof c.expectedRevision === 'number' ? { expectedRevision: c.expectedRevision } : {}),
          ...(str(c.resource) ? { resource: c.resource as string } : {}),
          disclosure: runDisclosure(ctx),
          signal: abort.signal,
        })
        .finally(async () => {
          watch?.stop();
          await cancel.release();
        });
      if (res.outcome === 'unknown') {
        throw new NodeFailure(
          'MHS.OUTCOME.UNKNOWN',
          `the outcome of ${res.commandId} is unknown; it will be reconciled`,
          { commandId: res.commandId },
        );
      }
      const receiptSeq = await res.recorded;
      const [entry] = await deps.ledger.range(receiptSeq, receiptSeq);
      return receiptOutputs(res.receipt as unknown as Record<string, unknown>, res.commandId, entry);
    },
  };
}

/**
 * The step an approval of a task is for: the one in flight on its endpoint, device and capability (a task runs one
 * step at a time per endpoint), else (an approval from before a restart) the first step that calls it.
 */
function stepLabel(steps: readonly TaskStep[], inFlight: ReadonlySet<number>, r: ApprovalRequest): ApprovalLabel {
  const calls = (i: number): boolean =>
    steps[i]?.endpoint === r.endpoint_id &&
    steps[i]?.device === r.device_id &&
    steps[i]?.capability === r.capability_id;
  const index = [...inFlight].find(calls) ?? steps.findIndex((_, i) => calls(i));
  if (index < 0) return {};
  const stepId = steps[index]?.id ?? `step-${index}`;
  return { title: `step ${index} (${stepId})`, data: { stepIndex: index, stepId } };
}

/**
 * `mhs.task`: a multi-endpoint parent action (config `steps[]` of `{endpoint, device, capability,
 * input, deadlineMs?}`), with child receipts and the `parent_action` entries in the ledger. Outputs every step's
 * result. A task interrupted by a restart resumes (HOST-081, 091): its recorded commands are settled from the
 * ledger or reconciled (never resent), completed steps keep their receipts, and only the remaining steps run.
 */
export function mhsTaskNode(deps: MhsNodeDeps): NodeModule {
  return {
    typeId: 'mhs.task',
    validate: (node) =>
      Array.isArray(node.config.steps) && node.config.steps.length
        ? []
        : [{ path: '/config/steps', message: 'a task needs at least one step' }],
    async execute(ctx) {
      const from = await ledgerMark(ctx, deps);
      const steps = (ctx.node.config.steps as Array<Record<string, unknown>>).map((s, i): TaskStep => ({
        id: str(s.id) ?? `step-${i}`,
        endpoint: s.endpoint as string,
        device: s.device as string,
        capability: s.capability as string,
        input: obj(s.input),
        ...(typeof s.deadlineMs === 'number' ? { deadlineMs: s.deadlineMs } : {}),
      }));
      // HOST-081, 091: a task the host was killed during resumes from its last recorded step.
      const earlier = ctx.resumed
        ? await findTaskStart(deps.ledger, from, (e) => e.run_id === ctx.runId && e.node_id === ctx.node.id)
        : undefined;
      const spec = {
        runId: ctx.runId,
        nodeId: ctx.node.id,
        steps,
        ...(ctx.runFence ? { runFence: ctx.runFence } : {}),
      };
      // Issue 19: a step waiting for its approval shows as the run's `waiting-approval` interrupt, naming the step.
      const inFlight = new Set<number>();
      const onProgress = (p: TaskProgress): void => {
        if (p.type === 'step.start') inFlight.add(p.index);
        else if (p.type === 'step.done') inFlight.delete(p.result.index);
      };
      const watch = deps.approvals
        ? watchApprovals(ctx, deps.approvals, (r) => stepLabel(steps, inFlight, r))
        : undefined;
      // A cancelled run voids the waiting step's approval (issue 16) and runs no further step.
      const abort = new AbortController();
      const cancel = withdrawOnCancel(ctx, deps.approvals, watch, abort, { abortAlways: true });
      const opts = { signal: abort.signal, onProgress };
      const result = await (
        earlier
          ? resumeTask({ engine: deps.engine, ledger: deps.ledger }, earlier, spec, opts)
          : deps.engine.runTask(
              {
                name: str(ctx.node.config.name) ?? ctx.node.name,
                steps,
                runId: ctx.runId,
                nodeId: ctx.node.id,
                ...(ctx.runFence ? { runFence: ctx.runFence } : {}),
                ...(ctx.traceparent ? { traceparent: ctx.traceparent } : {}),
              },
              { ...opts, disclosure: runDisclosure(ctx) },
            )
      ).finally(async () => {
        watch?.stop();
        await cancel.release();
      });
      const [parent] = await deps.ledger.range(result.endSeq, result.endSeq);
      const out = {
        taskId: result.taskId,
        ok: result.ok,
        steps: result.steps,
        ledger: parent ? { seq: parent.seq, digest: parent.digest } : undefined,
      };
      if (!result.ok)
        throw new NodeFailure('mhs_task_failed', `task ${result.taskId} did not complete every step`, {}, out);
      return {
        outputs: out,
        completedInfo: {
          taskId: result.taskId,
          ...(parent ? { ledger: { seq: parent.seq, digest: parent.digest } } : {}),
        },
      };
    },
  };
}

/** Both MHS node types over one engine. */
export function mhsNodes(deps: MhsNodeDeps): NodeModule[] {
  return [mhsInvokeNode(deps), mhsTaskNode(deps)];
}
