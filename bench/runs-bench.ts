/**
 * `npm run bench:runs`: what an OpenWOP run costs a real `mhs-host serve` child on a fresh SQLite file (issue 21
 * item 5), side by side in one run.
 *
 * 1. Throughput at `--clients` concurrent clients: rounds alternate a runs phase (each client starts a run of a
 *    3-node no-op workflow, registered through the API with an operator token, and waits for its terminal event by
 *    long poll, until `--runs` runs are done) and a bare phase (`GET /v1/runs/{id}` of a finished run, `--bare`
 *    requests in all), and swap their order every round. The server's CPU per run and per bare request is the
 *    child's own utime + stime (`/proc/<pid>/stat`) across the phase divided by its count.
 * 2. ms/event: runs of a 10-node and a 1,000-node no-op chain, one at a time, alternating; wall time from the start
 *    request until the client has the terminal event, divided by the events in the run's log.
 * The child is `bin/mhs-host.js serve` (compiled `dist/` when current, else the sources through tsx; printed);
 * `--cpu-prof <dir>` runs it under `node --cpu-prof`, the profile written there when it exits.
 * Last line: `runs <r>/s bare <b>/s cpu/run <c> ms ms/event 10 <a> 1000 <z> ratio <z/a>` (medians over rounds).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { distIsCurrent } from '../scripts/dist-current.js';
import { RealClock } from '../src/core/index.js';
import { openDb } from '../src/ledger/index.js';
import { createTokenStore } from '../src/policy/tokens.js';
import type { TokenRole } from '../src/policy/tokens.js';

const { values: opts } = parseArgs({
  options: {
    runs: { type: 'string', default: '300' },
    clients: { type: 'string', default: '16' },
    bare: { type: 'string', default: '3000' },
    rounds: { type: 'string', default: '3' },
    'long-runs': { type: 'string', default: '3' },
    'cpu-prof': { type: 'string' },
  },
});
const count = (name: keyof typeof opts): number => {
  const n = Number(opts[name]);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got ${opts[name]}`);
  return n;
};
const RUNS = count('runs');
const CLIENTS = count('clients');
const BARE = count('bare');
const ROUNDS = count('rounds');
const LONG_RUNS = count('long-runs');
const ROOT = new URL('..', import.meta.url).pathname;
const TERMINAL = new Set(['run.completed', 'run.failed', 'run.cancelled']);
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());

/** A chain of `n` `core.noop` nodes, manual trigger. */
function chain(id: string, n: number): Record<string, unknown> {
  const nodes = Array.from({ length: n }, (_, i) => ({
    id: `n${i}`,
    typeId: 'core.noop',
    name: `n${i}`,
    position: { x: i, y: 0 },
    config: {},
    inputs: {},
  }));
  const edges = nodes.slice(1).map((node, i) => ({ id: `e${i}`, sourceNodeId: `n${i}`, targetNodeId: node.id }));
  return {
    id,
    name: id,
    version: '1',
    nodes,
    edges,
    triggers: [{ id: 'manual', type: 'manual' }],
    variables: [],
    metadata: {},
    settings: {},
  };
}

async function token(location: string, role: TokenRole): Promise<string> {
  const db = await openDb(location);
  try {
    return (await createTokenStore(db, new RealClock()).add(`bench-${role}`, role)).token;
  } finally {
    await db.close();
  }
}

/** `mhs-host serve --port 0 --db <location> --no-workflows`; resolves with its URL once it prints it. */
function serve(location: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    [
      ...(opts['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', opts['cpu-prof']] : []),
      join(ROOT, 'bin/mhs-host.js'),
      ...['serve', '--port', '0', '--db', location, '--no-workflows'],
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /serving (http:\/\/\S+)/.exec(out);
      if (m) resolve({ url: m[1]!, child });
    });
    child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${out}`)));
  });
}

/** The child's user + system CPU so far, in ms (fields 14 and 15 of `/proc/<pid>/stat`, after the command name). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
}

async function call(url: string, bearer: string, method: string, path: string, body?: unknown) {
  const res = await fetch(url + path, {
    method,
    headers: {
      authorization: `Bearer ${bearer}`,
      accept: 'application/json',
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return (text ? JSON.parse(text) : {}) as Record<string, unknown>;
}

/** Starts a run of `workflowId` and long-polls until its terminal event: run id, wall ms and events in its log. */
async function oneRun(url: string, bearer: string, workflowId: string) {
  const t0 = performance.now();
  const runId = String((await call(url, bearer, 'POST', '/v1/runs', { workflowId })).runId);
  let after = -1;
  for (;;) {
    const p = await call(url, bearer, 'GET', `/v1/runs/${runId}/events/poll?afterSequence=${after}&timeout=10000`);
    const events = p.events as Array<{ type: string; sequence: number }>;
    const end = events.find((e) => TERMINAL.has(e.type));
    if (end) {
      if (end.type !== 'run.completed') throw new Error(`run ${runId} of ${workflowId} ended ${end.type}`);
      return { runId, ms: performance.now() - t0, events: end.sequence + 1 };
    }
    after = Number(p.lastSequence);
  }
}

/** `total` jobs shared by `CLIENTS` concurrent clients. */
async function spread(total: number, job: () => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < total) {
        next++;
        await job();
      }
    }),
  );
}

/** Runs `total` jobs on `CLIENTS` clients: per second, and the server's CPU ms per job. */
async function phase(pid: number, total: number, job: () => Promise<unknown>) {
  const c0 = cpuMs(pid);
  const t0 = performance.now();
  await spread(total, job);
  const s = (performance.now() - t0) / 1000;
  return { perSecond: total / s, cpuMs: (cpuMs(pid) - c0) / total };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mhs-runs-bench-'));
  const location = join(dir, 'host.db');
  const operator = await token(location, 'operator');
  const clientToken = await token(location, 'client');
  const srv = await serve(location);
  const pid = srv.child.pid!;
  try {
    for (const [id, n] of [
      ['bench-3', 3],
      ['bench-10', 10],
      ['bench-1000', 1000],
    ] as const)
      await call(srv.url, operator, 'POST', '/v1/workflows', chain(id, n));
    const mode = distIsCurrent(ROOT) ? 'compiled dist/' : 'sources through tsx';
    process.stdout.write(
      `runs: serve child (${mode}) on a fresh SQLite file; ${CLIENTS} clients, ${RUNS} 3-node runs and ${BARE} ` +
        `bare GET /v1/runs/{id} per round, ${ROUNDS} rounds; ${LONG_RUNS} runs each of 10 and 1,000 nodes\n`,
    );
    // Warm-up: the JIT, the store's statements, the connection pool.
    const warm = await oneRun(srv.url, clientToken, 'bench-3');
    await spread(CLIENTS * 10, () => oneRun(srv.url, clientToken, 'bench-3'));
    await spread(CLIENTS * 50, () => call(srv.url, clientToken, 'GET', `/v1/runs/${warm.runId}`));
    await oneRun(srv.url, clientToken, 'bench-10');

    const runs: Array<{ perSecond: number; cpuMs: number }> = [];
    const bare: Array<{ perSecond: number; cpuMs: number }> = [];
    for (let r = 0; r < ROUNDS; r++) {
      const doRuns = async () => runs.push(await phase(pid, RUNS, () => oneRun(srv.url, clientToken, 'bench-3')));
      const doBare = async () =>
        bare.push(await phase(pid, BARE, () => call(srv.url, clientToken, 'GET', `/v1/runs/${warm.runId}`)));
      if (r % 2) await doBare().then(doRuns);
      else await doRuns().then(doBare);
      const [a, b] = [runs[r]!, bare[r]!];
      process.stdout.write(
        `  round ${r + 1}: ${a.perSecond.toFixed(0)} runs/s (${a.cpuMs.toFixed(2)} ms server CPU/run), ` +
          `${b.perSecond.toFixed(0)} bare req/s (${b.cpuMs.toFixed(3)} ms CPU/req)\n`,
      );
    }

    /** From the log's own timestamps: ms/event over its first and its last tenth (does a step slow down late?). */
    const tenths = async (runId: string): Promise<string> => {
      const { events } = (await call(srv.url, clientToken, 'GET', `/v1/runs/${runId}/events`)) as {
        events: Array<{ timestamp: string }>;
      };
      const at = (i: number) => Date.parse(events[i]!.timestamp);
      const k = Math.floor(events.length / 10);
      const first = (at(k) - at(0)) / k;
      const last = (at(events.length - 1) - at(events.length - 1 - k)) / k;
      return ` (log timestamps: first tenth ${first.toFixed(3)}, last tenth ${last.toFixed(3)} ms/event)`;
    };
    const perEvent: Record<'10' | '1000', number[]> = { '10': [], '1000': [] };
    for (let r = 0; r < LONG_RUNS; r++)
      for (const n of (r % 2 ? ['1000', '10'] : ['10', '1000']) as Array<'10' | '1000'>) {
        const one = await oneRun(srv.url, clientToken, `bench-${n}`);
        perEvent[n].push(one.ms / one.events);
        process.stdout.write(
          `  ${n.padStart(4)} nodes: ${one.events} events in ${one.ms.toFixed(0)} ms, ` +
            `${(one.ms / one.events).toFixed(3)} ms/event${n === '1000' ? await tenths(one.runId) : ''}\n`,
        );
      }

    const r = median(runs.map((x) => x.perSecond));
    const b = median(bare.map((x) => x.perSecond));
    const c = median(runs.map((x) => x.cpuMs));
    const cb = median(bare.map((x) => x.cpuMs));
    const a10 = median(perEvent['10']);
    const z = median(perEvent['1000']);
    process.stdout.write(
      `medians: ${r.toFixed(0)} runs/s beside ${b.toFixed(0)} bare req/s (${(r / b).toFixed(3)}); ` +
        `server CPU ${c.toFixed(2)} ms/run, ${cb.toFixed(3)} ms/bare request (${(c / cb).toFixed(1)} x); ` +
        `load average ${loadavg()
          .map((x) => x.toFixed(2))
          .join(' ')}\n`,
    );
    process.stdout.write(
      `runs ${r.toFixed(0)}/s bare ${b.toFixed(0)}/s cpu/run ${c.toFixed(2)} ms ` +
        `ms/event 10 ${a10.toFixed(3)} 1000 ${z.toFixed(3)} ratio ${(z / a10).toFixed(2)}\n`,
    );
  } finally {
    const exited = new Promise((r) => srv.child.once('exit', r));
    srv.child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
