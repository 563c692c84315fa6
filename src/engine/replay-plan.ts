/**
 * HOST-057: the replay plan of recorded work, derived from the host ledger (and the manifests and endpoint
 * evidence an export package holds): per task, the ordered commands with capability, input, input_digest and
 * command_id and the receipt each got; per endpoint the manifest digests, the device seeds the manifest discloses
 * and the resulting state-hash sequence. A replay (replay-run.ts) sends the same commands to an endpoint in replay
 * mode (wire contract §10) and compares.
 */
import { H } from '../core/index.js';
import type { LedgerEntry } from '../ledger/ledger-types.js';
import { REDACTED } from '../ledger/redaction.js';
import type { EvidenceBundle, Receipt } from '../mhs/wire-types.js';

export const REPLAY_PLAN_FORMAT = 'mhs-host.replay-plan';
export const REPLAY_PLAN_SCHEMA_VERSION = 1;

/** What the recorded command's receipt said: what a replay must reproduce. */
export interface ExpectedReceipt {
  receipt_id: string;
  status: Receipt['status'];
  mode: string;
  revisions: Receipt['revisions'];
  state_hash: string;
  output: unknown;
  error_code: string | null;
  /** The endpoint evidence digest of the receipt (links it to the endpoint chain). */
  evidence_digest: string | null;
}

/** One recorded command to replay. */
export interface ReplayCommand {
  /** Seq of its `command.intent` in the recorded ledger. */
  seq: number;
  command_id: string;
  endpoint_id: string;
  device_id: string;
  capability_id: string;
  input: Record<string, unknown>;
  input_digest: string;
  /** The recorded input was redacted (HOST-056): it cannot be sent again as it was. */
  input_redacted: boolean;
  expected_revision?: number;
  task_step?: number;
  expected: ExpectedReceipt;
  /** Whether the exported endpoint evidence holds the expected receipt (null: no evidence was given). */
  evidence_in_bundle: boolean | null;
}

/** The commands of one task (or one ad-hoc command: `task_id` null), in recorded order. */
export interface ReplayTask {
  task_id: string | null;
  name: string | null;
  parent_seq: number | null;
  commands: ReplayCommand[];
}

/** One endpoint of the plan. */
export interface ReplayEndpoint {
  endpoint_id: string;
  /** Manifest digests disclosed for it, in ledger order; the last is the one a replay endpoint should serve. */
  manifest_digests: string[];
  /** Per device: mode and the seed its manifest discloses (`determinism.seed`), or null. */
  devices: Array<{ device_id: string; mode: string; determinism_kind: string; seed: number | null }>;
  /** The endpoint evidence the package holds, or null. */
  evidence: { genesis_digest: string; head_digest: string } | null;
  /** The resulting state-hash sequence, one per replayed command of this endpoint, in order. */
  state_hashes: Array<{ device_id: string; command_id: string; revision: number; state_hash: string }>;
}

/** A command the ledger shows but that cannot be replayed, and why. */
export interface NotReplayable {
  seq: number;
  command_id: string;
  endpoint_id: string;
  reason: 'not_sent' | 'endpoint_fault' | 'no_final_receipt';
}

/** The replay plan (HOST-057). `plan_digest` = H(plan without `plan_digest`). */
export interface ReplayPlan {
  format: typeof REPLAY_PLAN_FORMAT;
  schema_version: number;
  source: {
    kind: 'package' | 'ledger';
    ref: string;
    ledger_head_seq: number;
    ledger_head_digest: string;
    package_manifest_sha256?: string;
    /** Only this task was selected. */
    task_id?: string;
  };
  endpoints: ReplayEndpoint[];
  tasks: ReplayTask[];
  not_replayable: NotReplayable[];
  /** What the record cannot hold (e.g. no per-command seed on the wire). */
  missing: string[];
  plan_digest: string;
}

/** What {@link derivePlan} reads besides the ledger. */
export interface PlanInputs {
  source: Omit<ReplayPlan['source'], 'ledger_head_seq' | 'ledger_head_digest' | 'task_id'>;
  manifests: (digest: string) => Record<string, unknown> | undefined;
  bundles: EvidenceBundle[];
  taskId?: string;
}

const FINAL = new Set(['completed', 'rejected', 'failed', 'unknown']);

const SEED_GAP =
  'per-command seeds: the wire contract (mhs-wire.md §6) has no seed on commands or receipts; only a device ' +
  "manifest's determinism.seed is recorded, and a replay endpoint answers with recorded outputs instead";

function containsRedacted(v: unknown): boolean {
  if (v === REDACTED) return true;
  if (Array.isArray(v)) return v.some(containsRedacted);
  if (v && typeof v === 'object') return Object.values(v).some(containsRedacted);
  return false;
}

function expectedOf(r: Receipt): ExpectedReceipt {
  return {
    receipt_id: r.receipt_id,
    status: r.status,
    mode: r.mode,
    revisions: r.revisions,
    state_hash: r.state_hash,
    output: r.output ?? null,
    error_code: r.error?.mhs_code ?? null,
    evidence_digest: r.evidence?.digest ?? null,
  };
}

function devicesOf(manifest: Record<string, unknown> | undefined): ReplayEndpoint['devices'] {
  const devices = (manifest?.['devices'] ?? []) as Array<Record<string, unknown>>;
  return devices.map((d) => {
    const det = (d['determinism'] ?? {}) as { kind?: string; seed?: number };
    return {
      device_id: String(d['device_id']),
      mode: String(d['mode']),
      determinism_kind: det.kind ?? 'unknown',
      seed: typeof det.seed === 'number' ? det.seed : null,
    };
  });
}

/** Seals a plan: recomputes `plan_digest`. */
export function sealPlan(plan: Omit<ReplayPlan, 'plan_digest'> & { plan_digest?: string }): ReplayPlan {
  const { plan_digest: _old, ...body } = plan;
  return { ...body, plan_digest: H(body) };
}

/**
 * Derives the replay plan from recorded ledger entries (HOST-057). A command is replayable when its intent has a
 * final receipt (directly, after polling, or by reconciliation); commands never sent, refused by the endpoint as a
 * fault, or without a final outcome are listed in `not_replayable`. With `taskId`, only that task.
 */
export function derivePlan(entries: readonly LedgerEntry[], inputs: PlanInputs): ReplayPlan {
  const intents = new Map<string, LedgerEntry>();
  const finals = new Map<string, Receipt>();
  const outcome = new Map<string, NotReplayable['reason']>();
  const manifestsOf = new Map<string, string[]>();
  const taskInfo = new Map<string, { name: string | null; seq: number }>();
  for (const e of entries) {
    const cid = typeof e['command_id'] === 'string' ? e['command_id'] : null;
    if (e.kind === 'disclosure' && typeof e['endpoint_id'] === 'string' && typeof e['manifest_digest'] === 'string') {
      const list = manifestsOf.get(e['endpoint_id']) ?? [];
      if (list[list.length - 1] !== e['manifest_digest']) list.push(e['manifest_digest']);
      manifestsOf.set(e['endpoint_id'], list);
    } else if (e.kind === 'parent_action' && e['phase'] === 'start' && typeof e['task_id'] === 'string') {
      taskInfo.set(e['task_id'], { name: typeof e['name'] === 'string' ? e['name'] : null, seq: e.seq });
    } else if (e.kind === 'command.intent' && cid) intents.set(cid, e);
    else if (e.kind === 'receipt' && cid) {
      const r = e['receipt'] as Receipt | undefined;
      if (r && FINAL.has(r.status) && !finals.has(cid)) finals.set(cid, r);
    } else if (e.kind === 'command.not_sent' && cid) outcome.set(cid, 'not_sent');
    else if (e.kind === 'error' && e['phase'] === 'endpoint_fault' && cid) outcome.set(cid, 'endpoint_fault');
  }

  const bundleDigests = new Map<string, Set<string>>();
  for (const b of inputs.bundles)
    bundleDigests.set(b.endpoint_id, new Set(b.entries.filter((x) => x.kind === 'receipt').map((x) => x.digest)));

  const tasks: ReplayTask[] = [];
  const byTask = new Map<string, ReplayTask>();
  const notReplayable: NotReplayable[] = [];
  for (const [cid, e] of [...intents].sort((a, b) => a[1].seq - b[1].seq)) {
    const taskId = typeof e['task_id'] === 'string' ? e['task_id'] : null;
    if (inputs.taskId && taskId !== inputs.taskId) continue;
    const endpointId = String(e['endpoint_id']);
    const r = finals.get(cid);
    if (!r) {
      notReplayable.push({
        seq: e.seq,
        command_id: cid,
        endpoint_id: endpointId,
        reason: outcome.get(cid) ?? 'no_final_receipt',
      });
      continue;
    }
    const input = (e['input'] ?? {}) as Record<string, unknown>;
    const expected = expectedOf(r);
    const digests = bundleDigests.get(endpointId);
    const cmd: ReplayCommand = {
      seq: e.seq,
      command_id: cid,
      endpoint_id: endpointId,
      device_id: String(e['device_id']),
      capability_id: String(e['capability_id']),
      input,
      input_digest: String(e['input_digest']),
      input_redacted: containsRedacted(input),
      ...(typeof e['expected_revision'] === 'number' ? { expected_revision: e['expected_revision'] } : {}),
      ...(typeof e['task_step'] === 'number' ? { task_step: e['task_step'] } : {}),
      expected,
      evidence_in_bundle: digests ? expected.evidence_digest !== null && digests.has(expected.evidence_digest) : null,
    };
    let t = taskId ? byTask.get(taskId) : undefined;
    if (!t) {
      const info = taskId ? taskInfo.get(taskId) : undefined;
      t = { task_id: taskId, name: info?.name ?? null, parent_seq: info?.seq ?? null, commands: [] };
      tasks.push(t);
      if (taskId) byTask.set(taskId, t);
    }
    t.commands.push(cmd);
  }

  const commands = tasks.flatMap((t) => t.commands);
  const endpointIds = [...new Set(commands.map((c) => c.endpoint_id))];
  const endpoints: ReplayEndpoint[] = endpointIds.map((id) => {
    const digests = manifestsOf.get(id) ?? [];
    const bundle = inputs.bundles.find((b) => b.endpoint_id === id);
    return {
      endpoint_id: id,
      manifest_digests: digests,
      devices: devicesOf(inputs.manifests(digests[digests.length - 1] ?? '')),
      evidence: bundle ? { genesis_digest: bundle.genesis_digest, head_digest: bundle.head_digest } : null,
      state_hashes: commands
        .filter((c) => c.endpoint_id === id)
        .map((c) => ({
          device_id: c.device_id,
          command_id: c.command_id,
          revision: c.expected.revisions.after,
          state_hash: c.expected.state_hash,
        })),
    };
  });

  const missing = [SEED_GAP];
  const redacted = commands.filter((c) => c.input_redacted).map((c) => c.command_id);
  if (redacted.length)
    missing.push(`inputs redacted in the ledger (HOST-056), not replayable as sent: ${redacted.join(', ')}`);
  const outside = commands.filter((c) => c.evidence_in_bundle === false).map((c) => c.command_id);
  if (outside.length)
    missing.push(`receipts not in the exported endpoint evidence (another chain epoch?): ${outside.join(', ')}`);
  for (const e of endpoints) {
    if (!e.devices.length) missing.push(`manifest of ${e.endpoint_id} not available: device seeds unknown`);
    if (!e.evidence)
      missing.push(
        `no endpoint evidence of ${e.endpoint_id} in the record: no replay endpoint can be started from it ` +
          '(collect it before the export: a task does, or `mhs-host replay evidence`)',
      );
  }
  if (entries.some((e) => e.kind === 'estop.request' || e.kind === 'reset.request'))
    missing.push('e-stop and reset requests are operator actions and are not replayed');

  const head = entries[entries.length - 1];
  return sealPlan({
    format: REPLAY_PLAN_FORMAT,
    schema_version: REPLAY_PLAN_SCHEMA_VERSION,
    source: {
      ...inputs.source,
      ledger_head_seq: head?.seq ?? -1,
      ledger_head_digest: head?.digest ?? '',
      ...(inputs.taskId ? { task_id: inputs.taskId } : {}),
    },
    endpoints,
    tasks,
    not_replayable: notReplayable,
    missing,
  });
}

/** Every command of a plan, in plan order. */
export function planCommands(plan: ReplayPlan): ReplayCommand[] {
  return plan.tasks.flatMap((t) => t.commands);
}
