/**
 * Where a replay plan comes from and what goes with it (HOST-057): an evidence export package (verified first),
 * the store itself, or a plan file; the endpoint bundle a replay endpoint is started with (`sim --replay`); and the
 * offline check of a plan file, alone or against the package it claims to come from.
 */
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode, H, HostError } from '../core/index.js';
import type { Db } from '../ledger/db.js';
import { openArtifacts } from '../ledger/artifacts.js';
import { openLedger } from '../ledger/sql-ledger.js';
import type { LedgerEntry } from '../ledger/ledger-types.js';
import { LEDGER_FILE, MANIFEST_FILE, manifestPath } from '../ledger/package-format.js';
import type { PackageManifest } from '../ledger/package-format.js';
import { verifyPackage } from '../ledger/verify-package.js';
import type { Clock } from '../core/index.js';
import type { EvidenceBundle, EvidenceEntry } from '../mhs/wire-types.js';
import { REPLAY_PLAN_FORMAT, derivePlan, planCommands, sealPlan } from './replay-plan.js';
import type { ReplayPlan } from './replay-plan.js';

function invalid(problem: string, details: Record<string, unknown> = {}): HostError {
  return new HostError(ErrorCode.HOST_REPLAY_PLAN_INVALID, problem, { problem, ...details });
}

const jsonl = (text: string): unknown[] =>
  text
    .split('\n')
    .filter((l) => l.length)
    .map((l) => JSON.parse(l) as unknown);

/** The contents of a verified export package that a plan needs. */
export interface PackageContents {
  manifest: PackageManifest;
  entries: LedgerEntry[];
  bundles: EvidenceBundle[];
  manifests: Map<string, Record<string, unknown>>;
}

/**
 * Reads an export package after verifying it offline (HOST-053): a package that does not verify is refused with
 * `MHS.EVIDENCE.CHAIN_BROKEN` (details: the first break), a folder that is not a package with
 * `MHS.HOST.REPLAY_PLAN_INVALID`.
 */
export async function readPackage(dir: string): Promise<PackageContents> {
  const manifestText = await readFile(join(dir, MANIFEST_FILE), 'utf8').catch(() => null);
  if (manifestText === null) throw invalid(`${dir} is not an evidence package (no ${MANIFEST_FILE})`, { source: dir });
  const v = await verifyPackage(dir);
  if (!v.ok)
    throw new HostError(ErrorCode.EVIDENCE_CHAIN_BROKEN, `package ${dir} does not verify: a plan from it is refused`, {
      source: dir,
      first: v.first ?? null,
    });
  const manifest = JSON.parse(manifestText) as PackageManifest;
  const entries = jsonl(await readFile(join(dir, LEDGER_FILE), 'utf8')) as LedgerEntry[];
  const bundles: EvidenceBundle[] = [];
  for (const ep of manifest.endpoints)
    bundles.push({
      endpoint_id: ep.endpoint_id,
      genesis_digest: ep.genesis_digest,
      head_digest: ep.head_digest,
      entries: jsonl(await readFile(join(dir, ep.path), 'utf8')) as EvidenceEntry[],
    });
  const manifests = new Map<string, Record<string, unknown>>();
  for (const d of manifest.manifests)
    manifests.set(d, JSON.parse(await readFile(join(dir, manifestPath(d)), 'utf8')) as Record<string, unknown>);
  return { manifest, entries, bundles, manifests };
}

/** The replay plan of a verified package (HOST-057); `taskId` selects one task. */
export async function planFromPackage(dir: string, taskId?: string): Promise<ReplayPlan> {
  const p = await readPackage(dir);
  return selected(
    derivePlan(p.entries, {
      source: { kind: 'package', ref: dir, package_manifest_sha256: p.manifest.manifest_sha256 },
      manifests: (d) => p.manifests.get(d),
      bundles: p.bundles,
      ...(taskId ? { taskId } : {}),
    }),
    taskId,
  );
}

/** The replay plan of the ledger in a store, with its stored manifests and latest endpoint evidence. */
export async function planFromStore(db: Db, clock: Clock, ref: string, taskId?: string): Promise<ReplayPlan> {
  const ledger = await openLedger(db, { clock });
  try {
    const artifacts = await openArtifacts(db, { clock });
    const entries = await ledger.range(0);
    const manifests = new Map<string, Record<string, unknown>>();
    for (const m of await artifacts.listManifests()) {
      const body = await artifacts.getManifest(m.digest);
      if (body) manifests.set(m.digest, body);
    }
    return selected(
      derivePlan(entries, {
        source: { kind: 'ledger', ref },
        manifests: (d) => manifests.get(d),
        bundles: await artifacts.latestEvidenceBundles(),
        ...(taskId ? { taskId } : {}),
      }),
      taskId,
    );
  } finally {
    ledger.dispose();
  }
}

function selected(plan: ReplayPlan, taskId?: string): ReplayPlan {
  if (!planCommands(plan).length)
    throw invalid(taskId ? `no replayable command of task ${taskId}` : 'the record holds no replayable command', {
      ...(taskId ? { task_id: taskId } : {}),
      not_replayable: plan.not_replayable.length,
    });
  return plan;
}

/** Problems of a plan read from a file (empty when none): format, digest, input digests. */
export function planProblems(plan: ReplayPlan): string[] {
  const out: string[] = [];
  if (plan?.format !== REPLAY_PLAN_FORMAT) out.push(`format is not ${REPLAY_PLAN_FORMAT}`);
  if (!Array.isArray(plan?.tasks) || !Array.isArray(plan?.endpoints)) return [...out, 'tasks/endpoints missing'];
  const { plan_digest, ...body } = plan;
  if (plan_digest !== H(body)) out.push('plan_digest does not recompute (the plan was edited)');
  for (const c of planCommands(plan))
    if (!c.input_redacted && H(c.input) !== c.input_digest)
      out.push(`command ${c.command_id}: input_digest is not H(input)`);
  return out;
}

/** Reads a plan file; `MHS.HOST.REPLAY_PLAN_INVALID` when it is not JSON or not a plan. Problems are not fatal. */
export async function readPlanFile(file: string): Promise<ReplayPlan> {
  let plan: ReplayPlan;
  try {
    plan = JSON.parse(await readFile(file, 'utf8')) as ReplayPlan;
  } catch (err) {
    throw invalid(`cannot read replay plan ${file}`, { source: file, cause: String(err) });
  }
  if (plan?.format !== REPLAY_PLAN_FORMAT || !Array.isArray(plan.tasks) || !Array.isArray(plan.endpoints))
    throw invalid(`${file} is not a replay plan (format ${REPLAY_PLAN_FORMAT})`, { source: file });
  return plan;
}

/** A package folder or a plan file, by what the path is. */
export async function loadPlan(path: string, taskId?: string): Promise<ReplayPlan> {
  const isDir = await readdir(path).then(
    () => true,
    () => false,
  );
  if (isDir) return planFromPackage(path, taskId);
  const plan = await readPlanFile(path);
  if (!taskId) return plan;
  const tasks = plan.tasks.filter((t) => t.task_id === taskId);
  if (!tasks.length) throw invalid(`no task ${taskId} in plan ${path}`, { source: path, task_id: taskId });
  const ids = new Set(tasks.flatMap((t) => t.commands.map((c) => c.command_id)));
  const narrowed = {
    ...plan,
    source: { ...plan.source, task_id: taskId },
    tasks,
    endpoints: plan.endpoints
      .map((e) => ({ ...e, state_hashes: e.state_hashes.filter((h) => ids.has(h.command_id)) }))
      .filter((e) => e.state_hashes.length),
  };
  // An intact plan is resealed for the selection; an edited one keeps its stale digest, so the edit stays visible.
  return planProblems(plan).length ? narrowed : sealPlan(narrowed);
}

/**
 * The bundle to start a replay endpoint with (`mhs-host sim … --replay FILE`, wire contract §10): the package's
 * evidence of `endpointId` reduced to the receipt entries of the plan's commands, in chain order, so that the
 * endpoint's per-device cursor meets exactly the recorded commands. It is a replay input, not evidence: its
 * chain no longer recomputes (`replay_selection` says so); the package stays the evidence.
 */
export async function replayBundle(dir: string, endpointId: string, plan: ReplayPlan): Promise<EvidenceBundle> {
  const p = await readPackage(dir);
  const bundle = p.bundles.find((b) => b.endpoint_id === endpointId);
  if (!bundle)
    throw invalid(`package ${dir} holds no evidence of ${endpointId}`, {
      source: dir,
      endpoint_id: endpointId,
      endpoints: p.bundles.map((b) => b.endpoint_id),
    });
  const wanted = new Set(
    planCommands(plan)
      .filter((c) => c.endpoint_id === endpointId)
      .map((c) => c.expected.evidence_digest),
  );
  const entries = bundle.entries.filter((e) => e.kind === 'receipt' && wanted.has(e.digest));
  return {
    ...bundle,
    entries,
    replay_selection: { plan_digest: plan.plan_digest, receipts: entries.length, chain: 'not_verifiable' },
  } as EvidenceBundle;
}

/**
 * Offline check of a plan (HOST-057): its own problems ({@link planProblems}) and, with a package, whether it is
 * the plan that package yields for the same selection (first differing command named).
 */
export async function checkPlan(plan: ReplayPlan, packageDir?: string): Promise<{ ok: boolean; problems: string[] }> {
  const problems = planProblems(plan);
  if (packageDir) {
    const fresh = await planFromPackage(packageDir, plan.source?.task_id);
    const mine = planCommands(plan);
    const theirs = planCommands(fresh);
    if (mine.length !== theirs.length)
      problems.push(`the package yields ${theirs.length} commands, the plan has ${mine.length}`);
    for (const [i, c] of theirs.entries()) {
      const m = mine[i];
      if (!m || H(m) !== H(c)) {
        problems.push(`command ${i} (${c.command_id}) differs from the package's record`);
        break;
      }
    }
    if (H(plan.endpoints) !== H(fresh.endpoints)) problems.push('endpoints (manifests, seeds, state hashes) differ');
  }
  return { ok: problems.length === 0, problems };
}
