/**
 * `npm run bench:startup`: how long 50 stdio simulator endpoints take to come up (issue 21 item 6), from the
 * compiled tree (`dist/`, built first by the npm script) and from the TypeScript sources through tsx, side by
 * side, each started as `mhs-host demo` starts its simulators in that mode. Each round starts every child at once
 * and ends when the host's connector has finished the handshake with all of them (initialize, manifest, tools);
 * rounds alternate the modes. Also the CPU one child spends starting (its own user + system time). `compiled` is the
 * one-file `sim` bundle bin/mhs-host.js starts; `modules` the same compiled tree one file per module.
 * Last line: `startup endpoints <n> compiled <c> s tsx <t> s ratio <c/t>` (medians over the rounds).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { distIsCurrent } from '../scripts/dist-current.js';
import { connect } from '../src/mhs/connector.js';
import type { MhsConnection } from '../src/mhs/connector.js';

const ENDPOINTS = Number(process.env.BENCH_ENDPOINTS ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ROOT = new URL('..', import.meta.url).pathname;
type Mode = 'compiled' | 'modules' | 'tsx';
const MODES: Mode[] = ['compiled', 'modules', 'tsx'];
/**
 * The entry each mode's `mhs-host demo` gives its simulators: the bin of the compiled tree it runs from, or the
 * repository's bin running the sources (`MHS_DEV_TSX=1`, as when dist/ is absent or stale).
 */
const BIN: Record<Mode, string> = {
  compiled: join(ROOT, 'dist/bin/mhs-host.js'),
  // The compiled tree one file per module, as `sim` ran before its bundle (src/build/sim-build.ts).
  modules: join(ROOT, 'dist/src/cli/main.js'),
  tsx: join(ROOT, 'bin/mhs-host.js'),
};
const ENV: Record<Mode, Record<string, string>> = { compiled: {}, modules: {}, tsx: { MHS_DEV_TSX: '1' } };

/** One stdio simulator endpoint, connected through the host's connector (the handshake the host does). */
function up(mode: Mode, i: number): Promise<MhsConnection> {
  return connect(
    {
      connector_id: `mhs-bench-${i}`,
      transport: 'stdio',
      command: [process.execPath, BIN[mode], 'sim', 'conveyor', '--stdio', '--endpoint-id', `mhs://bench/${i}`],
      endpoint_id: null,
      enabled: true,
      source: { kind: 'registry', ref: 'bench' },
      auth: { scheme: 'local' },
    },
    { timeoutMs: 300_000, env: ENV[mode] },
  );
}

/** Seconds until all `ENDPOINTS` endpoints of `mode` are connected; they are closed afterwards. */
async function round(mode: Mode): Promise<number> {
  const t0 = performance.now();
  const settled = await Promise.allSettled(Array.from({ length: ENDPOINTS }, (_, i) => up(mode, i)));
  const s = (performance.now() - t0) / 1000;
  await Promise.all(settled.map((r) => (r.status === 'fulfilled' ? r.value.close() : undefined)));
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw new Error(`${mode}: an endpoint did not come up: ${String(failed.reason)}`);
  return s;
}

/** Reports the process's own CPU time (user + system, µs) on stderr as it exits. */
const REPORT_CPU = `data:text/javascript,${encodeURIComponent(
  "process.on('exit', () => { const u = process.cpuUsage(); process.stderr.write(`cpu_us ${u.user + u.system}\\n`); });",
)}`;

/** CPU milliseconds one child spends loading and starting its stdio endpoint (stdin closed at once: it then ends). */
function childCpuMs(mode: Mode): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', REPORT_CPU, BIN[mode], 'sim', 'conveyor', '--stdio'], {
      env: { ...process.env, ...ENV[mode] },
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stdin.end();
    child.on('error', reject);
    child.on('close', () => {
      const m = /cpu_us (\d+)/.exec(err);
      if (m) resolve(Number(m[1]) / 1000);
      else reject(new Error(`${mode}: the child reported no CPU time: ${err.slice(-300)}`));
    });
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

if (!distIsCurrent(ROOT))
  throw new Error('dist/ is missing or stale: run `npm run build` (npm run bench:startup does)');
const times: Record<Mode, number[]> = { compiled: [], modules: [], tsx: [] };
process.stdout.write(`start-up: ${ENDPOINTS} stdio simulator endpoints at once, ${ROUNDS} rounds per mode\n`);
for (let r = 0; r < ROUNDS; r++)
  for (const mode of r % 2 ? [...MODES].reverse() : MODES) {
    const s = await round(mode);
    times[mode].push(s);
    process.stdout.write(`  round ${r + 1} ${mode}: ${s.toFixed(2)} s\n`);
  }
const cpu: Record<Mode, number[]> = { compiled: [], modules: [], tsx: [] };
for (let r = 0; r < ROUNDS; r++) for (const mode of MODES) cpu[mode].push(await childCpuMs(mode));
const c = median(times.compiled);
const t = median(times.tsx);
process.stdout.write(
  `one child's start-up CPU: compiled ${median(cpu.compiled).toFixed(0)} ms (one file per module: ${median(cpu.modules).toFixed(0)} ms), tsx ${median(cpu.tsx).toFixed(0)} ms\n`,
);
process.stdout.write(
  `startup endpoints ${ENDPOINTS} compiled ${c.toFixed(2)} s (one file per module ${median(times.modules).toFixed(2)} s, ratio ${(c / median(times.modules)).toFixed(2)}) tsx ${t.toFixed(2)} s ratio ${(c / t).toFixed(2)}\n`,
);
