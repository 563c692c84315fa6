/**
 * `npm run bench:scale`: OpenWOP run throughput of one and of three `mhs-host serve` processes on one PostgreSQL store
 * (issue 19), side by side in one run. Each configuration gets a fresh schema of `MHS_BENCH_PG_URL` (or
 * `MHS_TEST_PG_URL`); rounds alternate (1, 3, 1, 3, ...) so drift on a shared machine hits both. A round starts
 * `BENCH_RUNS` runs of a five-node workflow (noop, 20 ms delay, noop, 20 ms delay, noop), `BENCH_CONCURRENCY` at a
 * time, spread round-robin over the processes' URLs, and waits for each run's terminal event by long poll; runs/s is
 * runs over the round's wall time. Last line: `ratio <3-process runs/s / 1-process runs/s>`.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { RealClock } from '../src/core/index.js';
import { openDb } from '../src/ledger/index.js';
import { createTokenStore } from '../src/policy/tokens.js';
import { delayChain } from '../test/helpers/chain-workflow.js';

const BASE = process.env.MHS_BENCH_PG_URL ?? process.env.MHS_TEST_PG_URL;
const RUNS = Number(process.env.BENCH_RUNS ?? 120);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 24);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const ROOT = new URL('..', import.meta.url).pathname;
const TERMINAL = new Set(['run.completed', 'run.failed', 'run.cancelled']);

const WORKFLOW = delayChain('bench-scale', 20, ['a', 'd1', 'b', 'd2', 'c']);

interface Proc {
  url: string;
  child: ChildProcess;
}

function serve(location: string): Promise<Proc> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--port', '0', '--db', location, '--no-workflows', '--no-mhs'],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  return new Promise((resolve, reject) => {
    const onData = (b: Buffer): void => {
      out += b.toString();
      const m = /serving (http:\/\/\S+)/.exec(out);
      if (m) resolve({ url: m[1]!, child });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${out}`)));
  });
}

async function stop(p: Proc): Promise<void> {
  if (p.child.exitCode !== null) return;
  const exited = new Promise((r) => p.child.once('exit', r));
  p.child.kill('SIGTERM');
  await exited;
}

async function call(
  url: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<Record<string, unknown>> {
  const res = await fetch(url + path, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

/** Starts one run through `url` and waits for its terminal event by long poll. */
async function oneRun(url: string, token: string): Promise<void> {
  const runId = String((await call(url, token, 'POST', '/v1/runs', { workflowId: WORKFLOW.id })).runId);
  let after = -1;
  for (;;) {
    const p = await call(url, token, 'GET', `/v1/runs/${runId}/events/poll?afterSequence=${after}&timeout=10000`);
    if ((p.events as Array<{ type: string }>).some((e) => TERMINAL.has(e.type))) return;
    after = Number(p.lastSequence);
  }
}

/** One round on a fresh schema with `n` processes: runs/s. */
async function round(n: number, tag: string): Promise<number> {
  const schema = `mhs_bench_${process.pid}_${tag}`;
  const location = `${BASE}${BASE!.includes('?') ? '&' : '?'}schema=${schema}`;
  const procs: Proc[] = [];
  try {
    // One after another: the first creates the schema.
    for (let i = 0; i < n; i++) procs.push(await serve(location));
    const db = await openDb(location);
    const tokens = createTokenStore(db, new RealClock());
    const token = (await tokens.add('bench', 'client')).token;
    const opToken = (await tokens.add('bench-op', 'operator')).token;
    await db.close();
    await call(procs[0]!.url, opToken, 'POST', '/v1/workflows', WORKFLOW);
    // Warm-up: a few runs per process.
    await Promise.all(procs.flatMap((p) => [0, 1, 2].map(() => oneRun(p.url, token))));
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < RUNS) {
          const i = next++;
          await oneRun(procs[i % n]!.url, token);
        }
      }),
    );
    return RUNS / ((performance.now() - t0) / 1000);
  } finally {
    for (const p of procs) await stop(p);
    const db = await openDb(BASE!);
    await db.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await db.close();
  }
}

async function main(): Promise<void> {
  if (!BASE) {
    console.error('bench:scale needs a PostgreSQL URL: set MHS_BENCH_PG_URL (or MHS_TEST_PG_URL)');
    process.exit(2);
  }
  const one: number[] = [];
  const three: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    one.push(await round(1, `r${r}_1`));
    three.push(await round(3, `r${r}_3`));
    console.log(`round ${r + 1}: 1 process ${one[r]!.toFixed(1)} runs/s, 3 processes ${three[r]!.toFixed(1)} runs/s`);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const [a, b] = [median(one), median(three)];
  console.log(`runs ${RUNS} concurrency ${CONCURRENCY} rounds ${ROUNDS} (median runs/s)`);
  console.log(`1 process   ${a.toFixed(1)} runs/s`);
  console.log(`3 processes ${b.toFixed(1)} runs/s`);
  console.log(`ratio ${(b / a).toFixed(2)}`);
}

await main();
