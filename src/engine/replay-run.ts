/**
 * HOST-085: drives endpoints in replay mode (wire contract §10) through the normal governed path with a replay
 * plan (HOST-057) and compares what comes back with what was recorded. The runtime must be opened with
 * `engine.sessionMode: "replay"` (a session in any other mode is refused before a command is sent) and with the
 * replay label on its ledger: {@link replayRuntimeOptions}.
 */
import { ErrorCode, H, HostError, toHostError } from '../core/index.js';
import type { MhsWireError } from '../core/index.js';
import type { ReplayLabel } from '../ledger/labelled-ledger.js';
import type { HostRuntime, HostRuntimeOptions } from './host-runtime.js';
import { planCommands } from './replay-plan.js';
import type { ReplayCommand, ReplayPlan } from './replay-plan.js';
import { planProblems } from './replay-source.js';
import type { StepResult } from './task-runner.js';

/** The first (or any) difference between a recorded command and its replay. */
export interface Divergence {
  /** Index of the command in plan order. */
  index: number;
  task_id: string | null;
  command_id: string;
  endpoint_id: string;
  device_id: string;
  capability_id: string;
  /** `receipt.<field>`, `manifest_digest`, `outcome` (no receipt) or `not_run`. */
  field: string;
  expected: unknown;
  got: unknown;
  /** The replay's command id, when one was sent. */
  replay_command_id?: string;
  /** The endpoint's error (e.g. `MHS.REPLAY.DIVERGED` with `details.expected`) or the host's. */
  error?: MhsWireError;
}

/** What a replay run found. */
export interface ReplayReport {
  result: 'match' | 'diverged';
  plan_digest: string;
  commands: number;
  compared: number;
  /** What is wrong with the plan itself (edited: digest or an input_digest does not recompute), see planProblems. */
  plan_problems: string[];
  /** Recorded commands the plan could not include (no final receipt, not sent, endpoint fault). */
  not_replayable: number;
  first_divergence: Divergence | null;
  divergences: Divergence[];
  /** Per endpoint: recorded and replayed state-hash sequences. */
  state_hashes: Array<{ endpoint_id: string; expected: string[]; got: string[] }>;
  /** Task ids of the replay run (in the replay's own ledger). */
  replay_tasks: string[];
  label: ReplayLabel;
}

/** The host-runtime options of a replay run: replay sessions only, every ledger entry labelled (HOST-085). */
export function replayRuntimeOptions(plan: ReplayPlan): Pick<HostRuntimeOptions, 'ledgerLabel' | 'engine'> {
  const label: ReplayLabel = { execution: 'replay', replay_of: plan.plan_digest };
  return { ledgerLabel: { ...label }, engine: { sessionMode: 'replay' } };
}

const RECEIPT_FIELDS = ['capability_id', 'device_id', 'input_digest', 'status', 'revisions', 'state_hash'] as const;

function compare(c: ReplayCommand, index: number, taskId: string | null, r: StepResult): Divergence | null {
  const base = {
    index,
    task_id: taskId,
    command_id: c.command_id,
    endpoint_id: c.endpoint_id,
    device_id: c.device_id,
    capability_id: c.capability_id,
    ...(r.commandId ? { replay_command_id: r.commandId } : {}),
  };
  const got = r.receipt;
  if (!got)
    return {
      ...base,
      field: r.status === 'skipped' ? 'not_run' : 'outcome',
      expected: c.expected.status,
      got: r.error?.mhs_code ?? r.status,
      ...(r.error ? { error: r.error } : {}),
    };
  const want: Record<string, unknown> = {
    capability_id: c.capability_id,
    device_id: c.device_id,
    input_digest: c.input_digest,
    status: c.expected.status,
    revisions: c.expected.revisions,
    state_hash: c.expected.state_hash,
  };
  const err = got.error ? { error: got.error } : {};
  for (const f of RECEIPT_FIELDS)
    if (H(want[f] ?? null) !== H((got as unknown as Record<string, unknown>)[f] ?? null))
      return { ...base, field: `receipt.${f}`, expected: want[f], got: got[f], ...err };
  if (H(c.expected.output ?? null) !== H(got.output ?? null))
    return { ...base, field: 'receipt.output', expected: c.expected.output, got: got.output, ...err };
  if ((c.expected.error_code ?? null) !== (got.error?.mhs_code ?? null))
    return { ...base, field: 'receipt.error', expected: c.expected.error_code, got: got.error?.mhs_code, ...err };
  // HOST-085: the session guard makes this unreachable; a non-replay receipt is never counted as a match.
  if (got.mode !== 'replay') return { ...base, field: 'receipt.mode', expected: 'replay', got: got.mode };
  return null;
}

/**
 * Replays `plan` on the runtime's endpoints (HOST-085): connects each recorded endpoint (`endpointMap`: recorded id
 * → connector id or endpoint id of the replay endpoint; default the recorded id), compares manifest digests, runs
 * each recorded task as a task (ad-hoc commands as single calls) through the governed path, and compares every
 * receipt with the recorded one. Stops starting tasks after the first divergence (an endpoint's replay cursor does
 * not move past a diverged call). Records `replay.start`/`replay.end`. Throws `MHS.HOST.REPLAY_REFUSED` when an
 * endpoint's session is not in replay mode (nothing was sent), and connection errors as they are.
 */
export async function runReplay(
  rt: HostRuntime,
  plan: ReplayPlan,
  opts: { endpointMap?: ReadonlyMap<string, string>; onResult?: (d: { index: number; ok: boolean }) => void } = {},
): Promise<ReplayReport> {
  const label = replayRuntimeOptions(plan).ledgerLabel as unknown as ReplayLabel;
  const actual = new Map<string, string>();
  for (const e of plan.endpoints) {
    const ep = await rt.connectEndpoint(opts.endpointMap?.get(e.endpoint_id) ?? e.endpoint_id);
    actual.set(e.endpoint_id, ep.endpointId);
  }
  await rt.ledger.append({
    kind: 'replay.start',
    plan_digest: plan.plan_digest,
    source: plan.source,
    endpoints: plan.endpoints.map((e) => ({ recorded: e.endpoint_id, replay: actual.get(e.endpoint_id) })),
    commands: planCommands(plan).length,
  });
  const divergences: Divergence[] = [];
  const got = new Map<string, string[]>();

  for (const e of plan.endpoints) {
    const ep = rt.engine.endpoint(actual.get(e.endpoint_id) as string);
    const want = e.manifest_digests[e.manifest_digests.length - 1];
    if (ep && want && ep.manifest.manifest_digest !== want)
      divergences.push({
        index: -1,
        task_id: null,
        command_id: '',
        endpoint_id: e.endpoint_id,
        device_id: '',
        capability_id: '',
        field: 'manifest_digest',
        expected: want,
        got: ep.manifest.manifest_digest,
      });
  }

  const replayTasks: string[] = [];
  let index = 0;
  let compared = 0;
  for (const t of plan.tasks) {
    if (divergences.length) break;
    const results: StepResult[] = [];
    const steps = t.commands.map((c) => ({
      endpoint: actual.get(c.endpoint_id) as string,
      device: c.device_id,
      capability: c.capability_id,
      input: c.input,
      ...(c.expected_revision !== undefined ? { expectedRevision: c.expected_revision } : {}),
    }));
    if (t.task_id) {
      try {
        const r = await rt.engine.runTask({ name: `replay of ${t.task_id}${t.name ? ` (${t.name})` : ''}`, steps });
        replayTasks.push(r.taskId);
        results.push(...r.steps);
      } catch (err) {
        // Refused before anything was recorded (e.g. an edited plan names an unknown device or capability).
        const error = toHostError(err).toWire();
        results.push(...steps.map((step, i): StepResult => ({ index: i, step, status: 'error', error })));
      }
    } else
      for (const [i, step] of steps.entries()) {
        try {
          const res = await rt.engine.invoke({
            endpointId: step.endpoint,
            deviceId: step.device,
            capabilityId: step.capability,
            input: step.input,
            ...(step.expectedRevision !== undefined ? { expectedRevision: step.expectedRevision } : {}),
          });
          await res.recorded; // the receipt entry is durable before the comparison and `replay.end`
          results.push({ index: i, step, status: res.outcome, commandId: res.commandId, receipt: res.receipt });
        } catch (err) {
          const e = toHostError(err);
          results.push({ index: i, step, status: 'error', error: e.toWire() });
        }
      }
    for (const [i, c] of t.commands.entries()) {
      const r = results[i] as StepResult;
      if (r.error?.mhs_code === ErrorCode.HOST_REPLAY_REFUSED) throw HostError.fromWire(r.error);
      const d = compare(c, index, t.task_id, r);
      if (r.receipt) {
        const list = got.get(c.endpoint_id) ?? [];
        list.push(r.receipt.state_hash);
        got.set(c.endpoint_id, list);
      }
      if (d) divergences.push(d);
      else compared++;
      opts.onResult?.({ index, ok: !d });
      index++;
    }
  }

  const commands = planCommands(plan).length;
  const report: ReplayReport = {
    result: divergences.length || compared !== commands ? 'diverged' : 'match',
    plan_digest: plan.plan_digest,
    commands,
    compared,
    plan_problems: planProblems(plan),
    not_replayable: plan.not_replayable.length,
    first_divergence: divergences[0] ?? null,
    divergences,
    state_hashes: plan.endpoints.map((e) => ({
      endpoint_id: e.endpoint_id,
      expected: e.state_hashes.map((s) => s.state_hash),
      got: got.get(e.endpoint_id) ?? [],
    })),
    replay_tasks: replayTasks,
    label,
  };
  await rt.ledger.append({
    kind: 'replay.end',
    plan_digest: plan.plan_digest,
    result: report.result,
    commands,
    compared,
    first_divergence: report.first_divergence,
  });
  return report;
}
