// Ledger benchmark (issue 4): appends per second (single durable append, batched, and 32
// concurrent appenders through group commit) and verification entries per second, each printed
// beside the raw sha256 rate over the same bytes measured in the same run, as a ratio.
// Issue 21: also package verification (export, then `verifyPackage`) beside raw sha256 over the same lines, and with
// `--entries N` a ledger of N entries exported and verified, each with its time and peak heap above the start.
// Usage: npm run bench:ledger [-- --n 2000 --entries 100000,1000000]; NODE_OPTIONS=--expose-gc for the heap after
// collection (PostgreSQL too when MHS_TEST_PG_URL is set).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { RealClock, jcs, sha256Hex } from '../src/core/index.js';
import { exportPackage, openDb, openLedger, verifyPackage } from '../src/ledger/index.js';
import type { LedgerAppend, LedgerEntry } from '../src/ledger/index.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const SINGLE = arg('single', 500);
const BATCHED = arg('n', 20_000);
const BATCH = 256;

function entry(i: number): LedgerAppend {
  return {
    kind: 'command.intent',
    command_id: `cmd_${String(i).padStart(10, '0')}`,
    session_id: 'ses_bench',
    endpoint_id: 'mhs://localhost:7400',
    input_digest: sha256Hex(String(i)),
    traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  };
}

/** The exact bytes each link hashes: JCS(entry without digest) || prev_digest. */
function linkBytes(entries: readonly LedgerEntry[]): string[] {
  return entries.map(({ digest: _d, ...rest }) => jcs(rest) + rest.prev_digest);
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/**
 * Raw sha256 entries/s over the same bytes: one-shot `sha256Hex` (what the verifiers call) over the JS strings and over
 * their UTF-8 bytes already in Buffers, each repeated for at least `ms`; the faster of the two (the stricter floor).
 */
function rawSha(bytes: readonly string[], ms = 300): number {
  const bufs = bytes.map((b) => Buffer.from(b, 'utf8'));
  const rate = (xs: readonly (string | Buffer)[]): number => {
    for (const b of xs) sha256Hex(b);
    let n = 0;
    const t0 = performance.now();
    while (performance.now() - t0 < ms) {
      for (const b of xs) sha256Hex(b);
      n += xs.length;
    }
    return n / ((performance.now() - t0) / 1000);
  };
  return Math.max(rate(bytes), rate(bufs));
}

/**
 * `run` (entries/s over `n` entries) and raw sha256 over `bytes`, alternated `rounds` times after one warm-up run of
 * each; medians, so both see the same load on a shared machine.
 */
async function sideBySide(
  n: number,
  run: () => Promise<void>,
  bytes: readonly string[],
  rounds = 5,
): Promise<{ rate: number; sha: number; firstS: number; cpuUs: number }> {
  const t = performance.now();
  await run();
  const firstS = (performance.now() - t) / 1000;
  rawSha(bytes, 50);
  const rates: number[] = [];
  const shas: number[] = [];
  const cpus: number[] = [];
  for (let k = 0; k < rounds; k++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await run();
    rates.push(n / ((performance.now() - t0) / 1000));
    const c = process.cpuUsage(c0);
    cpus.push((c.user + c.system) / n);
    shas.push(rawSha(bytes, 150));
  }
  return { rate: median(rates), sha: median(shas), firstS, cpuUs: median(cpus) };
}

function row(store: string, what: string, rate: number, sha: number): void {
  const f = (n: number) => Math.round(n).toLocaleString('en-US').padStart(12);
  console.log(
    `${store.padEnd(9)} ${what.padEnd(34)} ${f(rate)} entries/s   raw sha256 same bytes ${f(sha)} entries/s   ratio ${(rate / sha).toFixed(4)}`,
  );
}

async function bench(store: string, location: string): Promise<void> {
  const db = await openDb(location);
  const ledger = await openLedger(db, { clock: new RealClock() });
  try {
    let i = 0;
    // Single durable append: each awaited before the next (one commit + fsync each).
    const single: LedgerEntry[] = [];
    let t0 = performance.now();
    for (let k = 0; k < SINGLE; k++) single.push(await ledger.append(entry(i++)));
    let s = (performance.now() - t0) / 1000;
    row(store, `single durable append (n=${SINGLE})`, SINGLE / s, rawSha(linkBytes(single)));

    // Batched: appendBatch of BATCH entries per commit.
    const batched: LedgerEntry[] = [];
    t0 = performance.now();
    for (let k = 0; k < BATCHED; k += BATCH) {
      batched.push(
        ...(await ledger.appendBatch(Array.from({ length: Math.min(BATCH, BATCHED - k) }, () => entry(i++)))),
      );
    }
    s = (performance.now() - t0) / 1000;
    row(store, `appendBatch x${BATCH} (n=${BATCHED})`, BATCHED / s, rawSha(linkBytes(batched)));

    // 32 concurrent appenders each awaiting single appends: the writer group-commits them.
    const conc: LedgerEntry[] = [];
    const per = Math.max(1, Math.floor(SINGLE / 8));
    t0 = performance.now();
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        for (let k = 0; k < per; k++) conc.push(await ledger.append(entry(i++)));
      }),
    );
    s = (performance.now() - t0) / 1000;
    row(store, `32 concurrent appenders (n=${32 * per})`, (32 * per) / s, rawSha(linkBytes(conc)));

    // Verification: recompute every stored link (reads included), alternated with raw sha256 of the same link bytes.
    const all = await ledger.range(0);
    const v = await sideBySide(
      all.length,
      async () => {
        if (!(await ledger.verify()).ok) throw new Error('bench ledger does not verify');
      },
      linkBytes(all),
    );
    row(store, `verify (n=${all.length})`, v.rate, v.sha);
    // The first run of a process also starts the reader thread (SQLite, at least 10,000 seqs); not in the medians.
    // CPU of every thread of the process (process.cpuUsage) per entry, beside raw sha256's wall time per entry.
    console.log(
      `${store.padEnd(9)} verify: first run ${(v.firstS * 1000).toFixed(0)} ms, median ${((all.length / v.rate) * 1000).toFixed(0)} ms; CPU ${v.cpuUs.toFixed(2)} µs/entry (raw sha256 ${(1e6 / v.sha).toFixed(2)} µs/entry)`,
    );

    // Package verification over the exported files (streamed), beside raw sha256 of the same ledger lines.
    const out = join(dir, `pkg-${store}`);
    await exportPackage({ db, outDir: out, clock: new RealClock() });
    const pv = await sideBySide(
      all.length,
      async () => {
        const r = await verifyPackage(out);
        if (!r.ok) throw new Error(`bench package does not verify: ${JSON.stringify(r.first)}`);
      },
      all.map((e) => jcs(e)),
    );
    row(store, `package verify (n=${all.length})`, pv.rate, pv.sha);
    // From 4 MiB the canonical-form check runs on a thread of its own: CPU of all threads, beside the wall time.
    console.log(
      `${store.padEnd(9)} package verify: first run ${(pv.firstS * 1000).toFixed(0)} ms, median ${((all.length / pv.rate) * 1000).toFixed(0)} ms; CPU ${pv.cpuUs.toFixed(2)} µs/entry (raw sha256 ${(1e6 / pv.sha).toFixed(2)} µs/entry)`,
    );
    rmSync(out, { recursive: true, force: true });
  } finally {
    ledger.dispose();
    await db.close();
  }
}

/**
 * Runs `f` sampling heap and RSS every 20 ms; its seconds and peaks above the values when it started (MiB). With
 * `--expose-gc` (NODE_OPTIONS) every 25th sample collects first, and `liveMiB` is the peak of those: what `f` keeps,
 * not its garbage.
 */
async function withPeaks(
  f: () => Promise<void>,
): Promise<{ s: number; heapMiB: number; liveMiB: number; rssMiB: number }> {
  globalThis.gc?.();
  const base = process.memoryUsage();
  let heap = base.heapUsed;
  let live = base.heapUsed;
  let rss = base.rss;
  let tick = 0;
  const sample = () => {
    const collected = globalThis.gc !== undefined && ++tick % 25 === 0;
    if (collected) globalThis.gc?.();
    const m = process.memoryUsage();
    heap = Math.max(heap, m.heapUsed);
    if (collected) live = Math.max(live, m.heapUsed);
    rss = Math.max(rss, m.rss);
  };
  const timer = setInterval(sample, 20);
  const t0 = performance.now();
  try {
    await f();
  } finally {
    clearInterval(timer);
  }
  sample();
  const mib = (b: number) => b / 2 ** 20;
  return {
    s: (performance.now() - t0) / 1000,
    heapMiB: mib(heap - base.heapUsed),
    liveMiB: mib(live - base.heapUsed),
    rssMiB: mib(rss - base.rss),
  };
}

type Peaks = Awaited<ReturnType<typeof withPeaks>>;

/** `--entries N[,M…]`: `ledger verify`, `ledger export` and package verification of an N-entry SQLite ledger. */
async function large(n: number): Promise<{ verify: Peaks; exp: Peaks; pkg: Peaks }> {
  const file = join(dir, `large-${n}.db`);
  const db = await openDb(file, { sqlite: { synchronous: 'NORMAL' } });
  const ledger = await openLedger(db, { clock: new RealClock() });
  const out = join(dir, `pkg-large-${n}`);
  try {
    let i = 0;
    const t0 = performance.now();
    while (i < n - 1) {
      const k = Math.min(5000, n - 1 - i);
      await ledger.appendBatch(Array.from({ length: k }, () => entry(i++)));
    }
    console.log(`large     built ${n} entries in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const show = (what: string, p: Peaks) =>
      console.log(
        `large     ${what.padEnd(14)} n=${n}  ${p.s.toFixed(1)} s  peak heap +${p.heapMiB.toFixed(1)} MiB (after collection +${p.liveMiB.toFixed(1)} MiB)  peak rss +${p.rssMiB.toFixed(1)} MiB`,
      );
    const verify = await withPeaks(async () => {
      if (!(await ledger.verify()).ok) throw new Error('large ledger does not verify');
    });
    show('ledger verify', verify);
    const exp = await withPeaks(async () => {
      const r = await exportPackage({ db, outDir: out, clock: new RealClock() });
      if (r.status !== 'verified') throw new Error('large package is unverified');
    });
    show('ledger export', exp);
    const pkg = await withPeaks(async () => {
      const r = await verifyPackage(out);
      if (!r.ok) throw new Error(`large package does not verify: ${JSON.stringify(r.first)}`);
    });
    show('package verify', pkg);
    return { verify, exp, pkg };
  } finally {
    ledger.dispose();
    await db.close();
    rmSync(out, { recursive: true, force: true });
    rmSync(file, { force: true });
  }
}

const dir = mkdtempSync(join(tmpdir(), 'mhs-ledger-bench-'));
try {
  console.log(`ledger bench: node ${process.version}, ${new Date().toISOString()}`);
  const i = process.argv.indexOf('--entries');
  const sizes =
    i > 0
      ? String(process.argv[i + 1])
          .split(',')
          .map(Number)
      : [];
  const runs: { n: number; p: Awaited<ReturnType<typeof large>> }[] = [];
  for (const n of sizes) runs.push({ n, p: await large(n) });
  if (runs.length > 1) {
    // Side by side: memory independent of length means the same peaks at every size.
    const m = (p: Peaks) => `${p.liveMiB.toFixed(1)}/${p.heapMiB.toFixed(1)}/${p.rssMiB.toFixed(1)}`;
    console.log(
      `large     peaks (heap after collection / heap / rss, MiB) ${runs
        .map(({ n, p }) => `n=${n}: verify ${m(p.verify)} export ${m(p.exp)} package ${m(p.pkg)}`)
        .join('; ')}`,
    );
  }
  await bench('sqlite', join(dir, 'bench.db'));
  const pg = process.env['MHS_TEST_PG_URL'];
  if (pg) {
    const schema = `mhs_bench_${process.pid}`;
    await bench('postgres', `${pg}${pg.includes('?') ? '&' : '?'}schema=${schema}`);
    const db = await openDb(pg);
    await db.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await db.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
