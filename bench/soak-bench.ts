// Soak benchmark (issue 21 item 7): consecutive 1-step tasks on one host with an artifact store and one in-process
// conveyor simulator, SQLite synchronous=FULL. Prints ms per task over the first and the last window and their ratio,
// store growth per task in each half, how many tasks reported ok while their evidence failed (must be 0), and the
// one export-time collection of the endpoint's bundle at the end.
// Usage: npm run bench:soak [-- --tasks 5000 --window 250]
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { RealClock } from '../src/core/index.js';
import { createEngine, openOperatorRuntime } from '../src/engine/index.js';
import { exportPackage, openDb, openLedger, verifyPackage } from '../src/ledger/index.js';
import { openArtifacts } from '../src/ledger/artifacts.js';
import { connectMemorySim } from './in-process-sim.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const TASKS = arg('tasks', 5000);
const WINDOW = Math.max(10, Math.min(arg('window', 250), Math.floor(TASKS / 4)));
const WARMUP = Math.min(50, Math.floor(TASKS / 10));
const DEVICE = 'conveyor-workcell';
const CAP = 'cap.world.step.v1';

const fileSize = (p: string): number => {
  let n = 0;
  for (const f of [p, `${p}-wal`]) n += statSync(f, { throwIfNoEntry: false })?.size ?? 0;
  return n;
};
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
};

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mhs-soak-'));
  const path = join(dir, 'host.db');
  try {
    const clock = new RealClock();
    const db = await openDb(path, { sqlite: { synchronous: 'FULL' } });
    const ledger = await openLedger(db, { clock });
    const artifacts = await openArtifacts(db, { clock });
    const operator = await openOperatorRuntime(db, clock);
    const background: string[] = [];
    const engine = createEngine({
      ledger,
      clock,
      artifacts,
      gate: operator.services.gate,
      onBackgroundError: (e) => background.push(e.code),
    });
    await engine.start();
    const sim = await connectMemorySim('soak');
    const endpoint = (await engine.attach(sim.conn)).endpointId;
    process.stdout.write(
      `soak: ${TASKS} consecutive 1-step tasks, one in-process endpoint, SQLite FULL, node ${process.version}, ${new Date().toISOString()}\n`,
    );

    const ms: number[] = [];
    const sizes: number[] = [];
    let okWithFailedEvidence = 0;
    let notOk = 0;
    for (let i = 0; i < WARMUP + TASKS; i++) {
      const t0 = performance.now();
      const r = await engine.runTask({
        name: `soak ${i}`,
        steps: [{ endpoint, device: DEVICE, capability: CAP, input: { ticks: 1 } }],
      });
      const dt = performance.now() - t0;
      if (i < WARMUP) continue;
      ms.push(dt);
      if (!r.ok) notOk++;
      if (r.ok && (r.evidence ?? []).some((e) => 'error' in e)) okWithFailedEvidence++;
      const k = i - WARMUP;
      if (k === 0 || k === Math.floor(TASKS / 2) || k === TASKS - 1) sizes.push(fileSize(path));
    }
    const start = median(ms.slice(0, WINDOW));
    const end = median(ms.slice(-WINDOW));
    const half = Math.floor(TASKS / 2);
    const g1 = ((sizes[1] ?? NaN) - (sizes[0] ?? NaN)) / half;
    const g2 = ((sizes[2] ?? NaN) - (sizes[1] ?? NaN)) / (TASKS - 1 - half);
    process.stdout.write(
      `  ms/task (median of ${WINDOW}): first ${start.toFixed(2)}  last ${end.toFixed(2)}\n` +
        `  store growth: first half ${(g1 / 1024).toFixed(2)} KiB/task  second half ${(g2 / 1024).toFixed(2)} KiB/task\n` +
        `  tasks not ok ${notOk}; background errors ${background.length}\n`,
    );

    // The one export-time collection, then the package (issue 21: never per task).
    const t0 = performance.now();
    const collected = await engine.collectPendingEvidence();
    const collectMs = performance.now() - t0;
    for (const c of collected)
      process.stdout.write(
        'error' in c
          ? `  collection at export: ${c.endpointId} FAILED ${c.error.mhs_code} (${collectMs.toFixed(0)} ms)\n`
          : `  collection at export: ${c.entries} endpoint entries in ${collectMs.toFixed(0)} ms\n`,
      );
    const out = join(dir, 'pkg');
    const ex = await exportPackage({ db, outDir: out, clock });
    const v = await verifyPackage(out);
    process.stdout.write(
      `  package ${ex.status}, verify ${v.ok ? 'ok' : `FAILED ${v.first?.reason ?? ''}`}, ${v.checked.receipts_cross_checked} receipts cross-checked\n`,
    );
    process.stdout.write(
      `soak tasks ${TASKS} ms/task end/start ${(end / start).toFixed(2)} growth second/first ${(g2 / g1).toFixed(2)} ok_with_failed_evidence ${okWithFailedEvidence}\n`,
    );
    await engine.stop();
    await sim.close();
    await operator.close();
    await db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
