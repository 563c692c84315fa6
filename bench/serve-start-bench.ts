/**
 * `npm run bench:serve-start [-- --against <tree> --rounds N]`: what one `mhs-host serve` start costs (issue 21
 * item 6; every test that spawns `serve` pays it): the child's own CPU (user + system from `/proc/<pid>/stat`) and the
 * wall time from spawn until it prints its URL, on a fresh SQLite file with `--no-workflows`. It runs the compiled
 * tree `dist/` of this repository (built first by the npm script); with `--against <tree>` (another checkout,
 * built with `npm run build`) both trees start alternately, round by round, so the load on the machine falls on both.
 * Last line: `serve-start cpu <ms> wall <ms>` (medians), and with `--against` also `against <ms> <ms> ratio <cpu>`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { against: { type: 'string' }, rounds: { type: 'string', default: '8' } },
});
const ROOT = resolve(new URL('..', import.meta.url).pathname);
const TICK_MS = 10; // USER_HZ: /proc/<pid>/stat counts CPU in ticks of 1/100 s on Linux.

interface Start {
  cpuMs: number;
  wallMs: number;
}

/** Starts `serve` of `tree`, waits for its URL line, reads its CPU, stops it. */
async function start(tree: string): Promise<Start> {
  const dir = mkdtempSync(join(tmpdir(), 'mhs-serve-start-'));
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    [join(tree, 'dist/src/cli/main.js'), 'serve', '--port', '0', '--db', join(dir, 'host.db'), '--no-workflows'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  try {
    const wallMs = await new Promise<number>((ok, fail) => {
      let out = '';
      child.stdout.on('data', (b: Buffer) => {
        out += b.toString();
        if (/serving http:\/\//.test(out)) ok(performance.now() - t0);
      });
      child.stderr.on('data', (b: Buffer) => (out += b.toString()));
      child.on('exit', (code) => fail(new Error(`serve exited ${code} before serving: ${out}`)));
    });
    const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
    // Fields after the command name `(…)`: utime and stime are the 14th and 15th of the whole line.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cpuMs = (Number(f[11]) + Number(f[12])) * TICK_MS;
    return { cpuMs, wallMs };
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

const trees: Array<[string, string]> = [['this', ROOT]];
if (values.against) trees.push(['against', resolve(values.against)]);
const rounds = Number(values.rounds);
const got = new Map<string, Start[]>(trees.map(([n]) => [n, []]));
process.stdout.write(
  `serve-start: ${rounds} rounds; load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}\n`,
);
await start(ROOT); // warm the file cache once
for (let r = 0; r < rounds; r++) {
  // Alternate which tree goes first.
  const order = r % 2 ? [...trees].reverse() : trees;
  for (const [name, tree] of order) {
    const s = await start(tree);
    got.get(name)!.push(s);
    process.stdout.write(`  round ${r + 1} ${name}: cpu ${s.cpuMs} ms, wall ${s.wallMs.toFixed(0)} ms\n`);
  }
}
const cpu = (n: string) => median(got.get(n)!.map((s) => s.cpuMs));
const wall = (n: string) => median(got.get(n)!.map((s) => s.wallMs));
process.stdout.write(
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}\n`,
);
let last = `serve-start cpu ${cpu('this')} wall ${wall('this').toFixed(0)}`;
if (values.against)
  last += ` against ${cpu('against')} ${wall('against').toFixed(0)} ratio ${(cpu('this') / cpu('against')).toFixed(2)}`;
process.stdout.write(`${last}\n`);
