import { writeFile } from 'node:fs/promises';
import { Command } from 'commander';
import { ErrorCode, HostError, RealClock } from '../core/index.js';
import { openDb, resolveDbLocation } from '../ledger/index.js';
import {
  checkPlan,
  loadPlan,
  planFromStore,
  readPlanFile,
  replayBundle,
  replayRuntimeOptions,
  runReplay,
} from '../engine/index.js';
import type { ReplayPlan, ReplayReport } from '../engine/index.js';
import { badFlag, openCliRuntime, withRuntimeOptions } from './cli-runtime.js';
import type { RuntimeFlags } from './cli-runtime.js';

const out = (l: string) => void process.stdout.write(`${l}\n`);

async function emit(value: unknown, file: string | undefined): Promise<void> {
  const text = `${JSON.stringify(value, null, 2)}\n`;
  if (file) await writeFile(file, text);
  else process.stdout.write(text);
}

/** `RECORDED=REF` pairs of `--endpoint` (repeatable). */
function endpointPair(v: string, prev: Map<string, string> = new Map()): Map<string, string> {
  const i = v.lastIndexOf('=');
  if (i <= 0 || i === v.length - 1)
    throw badFlag('--endpoint', 'expected RECORDED_ENDPOINT_ID=CONNECTOR_OR_ENDPOINT_ID', { value: v });
  return new Map(prev).set(v.slice(0, i), v.slice(i + 1));
}

function printReport(r: ReplayReport): void {
  out(`replay of plan ${r.plan_digest.slice(0, 12)}: ${r.result} (${r.compared}/${r.commands} commands matched)`);
  for (const p of r.plan_problems) out(`plan problem: ${p}`);
  if (r.not_replayable) out(`${r.not_replayable} recorded command(s) had no final receipt and were not replayed`);
  const d = r.first_divergence;
  if (d) {
    out(`first divergence: command ${d.index} ${d.command_id} ${d.endpoint_id} ${d.device_id} ${d.capability_id}`);
    out(`  ${d.field}: expected ${JSON.stringify(d.expected)} got ${JSON.stringify(d.got)}`);
    if (d.error) out(`  ${d.error.mhs_code}: ${JSON.stringify(d.error.details ?? {})}`);
  }
  for (const s of r.state_hashes)
    out(`state hashes ${s.endpoint_id}: recorded ${s.expected.length}, replayed ${s.got.length}`);
  out('every session, ledger entry and receipt of this run is labelled replay (execution: "replay")');
}

/**
 * `mhs-host replay plan|bundle|check|run` (HOST-057, 085; docs/replay.md): derive the replay plan of recorded work
 * from an export package (or a store), write the bundle a replay endpoint starts with, check a plan offline, and
 * replay it against endpoints in replay mode with a match/diverged report (exit 1 on divergence).
 */
export function replayCommand(): Command {
  const cmd = new Command('replay').description('Record and replay plans against MHS endpoints in replay mode');
  cmd
    .command('plan')
    .description('Derive the replay plan (HOST-057) of an export package, or of the store with --db')
    .argument('[package]', 'evidence package folder (verified first)')
    .option('--db <location>', 'derive from this store instead of a package')
    .option('--task <id>', 'only this task')
    .option('--out <file>', 'write the plan here (default stdout)')
    .action(async (pkg: string | undefined, o: { db?: string; task?: string; out?: string }) => {
      if (!pkg && !o.db) throw badFlag('<package>', 'give a package folder or --db');
      let plan: ReplayPlan;
      if (pkg) plan = await loadPlan(pkg, o.task);
      else {
        const loc = resolveDbLocation({ flag: o.db });
        const db = await openDb(loc);
        try {
          plan = await planFromStore(db, new RealClock(), o.db ?? 'default', o.task);
        } finally {
          await db.close();
        }
      }
      await emit(plan, o.out);
    });
  cmd
    .command('bundle')
    .description('Write the evidence bundle to start a replay endpoint with (`mhs-host sim ... --replay FILE`)')
    .argument('<package>', 'evidence package folder')
    .requiredOption('--endpoint <id>', 'recorded endpoint id')
    .option('--task <id>', 'only the receipts of this task')
    .requiredOption('--out <file>', 'bundle file to write')
    .action(async (pkg: string, o: { endpoint: string; task?: string; out: string }) => {
      const plan = await loadPlan(pkg, o.task);
      const b = await replayBundle(pkg, o.endpoint, plan);
      await writeFile(o.out, JSON.stringify(b));
      const seeds = plan.endpoints.find((e) => e.endpoint_id === o.endpoint)?.devices ?? [];
      out(`wrote ${o.out}: ${b.entries.length} recorded receipts of ${o.endpoint}`);
      for (const d of seeds) out(`  device ${d.device_id}: ${d.mode}, ${d.determinism_kind}, seed ${d.seed ?? 'none'}`);
    });
  withRuntimeOptions(
    cmd
      .command('evidence')
      .description(
        "Collect and store endpoints' evidence bundles (mhs__evidence export) so that an export can seed replay endpoints",
      )
      .argument('<connector...>', 'connector ids or endpoint ids (enabled)'),
  ).action(async (refs: string[], o: RuntimeFlags) => {
    const rt = await openCliRuntime(o);
    try {
      for (const ref of refs) {
        const ep = await rt.connectEndpoint(ref);
        for (const c of await rt.engine.collectEvidence(ep.endpointId))
          out(
            `collected ${c.endpointId}: ${c.entries} entries, head ${c.headDigest.slice(0, 12)} (ledger seq ${c.seq})`,
          );
      }
    } finally {
      await rt.close();
    }
  });
  cmd
    .command('check')
    .description(
      'Check a plan file offline: its digest and input digests, and with --package that the package yields it',
    )
    .argument('<plan>', 'replay plan JSON')
    .option('--package <dir>', 'the package the plan claims to come from')
    .action(async (file: string, o: { package?: string }) => {
      const r = await checkPlan(await readPlanFile(file), o.package);
      if (r.ok) return out(`plan ${file}: ok`);
      for (const p of r.problems) out(`problem: ${p}`);
      throw new HostError(ErrorCode.HOST_REPLAY_PLAN_INVALID, `plan ${file} does not check`, { problems: r.problems });
    });
  const run = cmd
    .command('run')
    .description(
      'Replay a package or plan against endpoints in replay mode (HOST-085) through the governed path; exit 1 on divergence',
    )
    .argument('<package-or-plan>', 'evidence package folder or replay plan file')
    .option('--task <id>', 'only this recorded task')
    .option(
      '--endpoint <recorded=ref>',
      'replay endpoint (connector id or endpoint id) for a recorded endpoint id (repeatable; default: the recorded id)',
      endpointPair,
    )
    .option('--report <file>', 'also write the JSON report here')
    .option('--json', 'print the JSON report instead of text')
    .option('--enable-composition', 'experimental (HOST-084): replay recorded mhs.composition.run commands too');
  withRuntimeOptions(run).action(
    async (
      src: string,
      o: RuntimeFlags & {
        task?: string;
        endpoint?: Map<string, string>;
        report?: string;
        json?: boolean;
        enableComposition?: boolean;
      },
    ) => {
      const plan = await loadPlan(src, o.task);
      const runtime = replayRuntimeOptions(plan);
      const rt = await openCliRuntime(o, {
        runtime: o.enableComposition
          ? { ...runtime, engine: { ...runtime.engine, experimentalComposition: true } }
          : runtime,
      });
      let report: ReplayReport;
      try {
        report = await runReplay(rt, plan, o.endpoint ? { endpointMap: o.endpoint } : {});
      } finally {
        await rt.close();
      }
      if (o.report) await emit(report, o.report);
      if (o.json) await emit(report, undefined);
      else printReport(report);
      if (report.result !== 'match') process.exitCode = 1;
    },
  );
  return cmd;
}
