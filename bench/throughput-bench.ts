/**
 * `npm run bench:throughput`: governed calls per second with many endpoints busy at once (issue 21 item 1).
 *
 * For 1, 10 and 50 in-process conveyor simulators (MCP SDK in-memory transport pair, the real connector and
 * projection), every endpoint runs sequential calls for a fixed time: first through the engine (policy gate,
 * durable `command.intent` and receipt in a real SQLite file at synchronous=FULL, session, lane), then as bare MCP
 * client calls to fresh simulators. Entries per fsync is the ledger entries written ÷ the WAL fsyncs in the run.
 * Last line, for 50 endpoints: `throughput governed <g>/s bare <b>/s ratio <g/b> entries/fsync <e>`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/client';
import { RealClock } from '../src/core/index.js';
import { createEngine, openOperatorRuntime } from '../src/engine/index.js';
import { SqliteDb, openDb, openLedger } from '../src/ledger/index.js';
import { capabilityToolName } from '../src/mhs/tool-names.js';
import { connectMemorySim, memorySim } from './in-process-sim.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const COUNTS = (process.env.BENCH_ENDPOINT_COUNTS ?? '1,10,50').split(',').map(Number);
const DEVICE = 'conveyor-workcell';
const CAP = 'cap.world.step.v1';

/** Runs `call` sequentially on each of `n` workers until the time is up; calls per second over all of them. */
async function saturate(n: number, call: (i: number) => Promise<void>, seconds: number): Promise<number> {
  let calls = 0;
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      while (performance.now() < end) {
        await call(i);
        calls++;
      }
    }),
  );
  return calls / ((performance.now() - t0) / 1000);
}

async function governed(n: number, dir: string): Promise<{ perSec: number; entriesPerFsync: number }> {
  const clock = new RealClock();
  const db = await openDb(join(dir, `host-${n}.db`), { sqlite: { synchronous: 'FULL' } });
  if (!(db instanceof SqliteDb) || db.synchronous !== 'FULL') throw new Error('the bench needs a FULL SQLite store');
  const ledger = await openLedger(db, { clock });
  const operator = await openOperatorRuntime(db, clock);
  const engine = createEngine({ ledger, clock, gate: operator.services.gate });
  await engine.start();
  const sims = await Promise.all(Array.from({ length: n }, (_, i) => connectMemorySim(`g${n}-${i}`)));
  const ids: string[] = [];
  for (const s of sims) ids.push((await engine.attach(s.conn)).endpointId);
  const call = async (i: number) => {
    const r = await engine.invoke({
      endpointId: ids[i] as string,
      deviceId: DEVICE,
      capabilityId: CAP,
      input: { ticks: 1 },
    });
    if (r.receipt.status !== 'completed') throw new Error(`governed call: ${r.receipt.status}`);
    await r.recorded;
  };
  await saturate(n, call, 0.5); // warm-up: sessions open, validators compiled
  const seq0 = (await ledger.head()).seq;
  const syncs0 = db.walSyncs;
  const perSec = await saturate(n, call, SECONDS);
  const entries = (await ledger.head()).seq - seq0;
  const syncs = db.walSyncs - syncs0;
  await engine.stop();
  for (const s of sims) await s.close();
  await operator.close();
  await db.close();
  return { perSec, entriesPerFsync: entries / Math.max(1, syncs) };
}

async function bare(n: number): Promise<number> {
  const tool = capabilityToolName(DEVICE, CAP);
  const sims = Array.from({ length: n }, (_, i) => memorySim(`mhs://bench/b${n}-${i}`));
  const clients = await Promise.all(
    sims.map(async (s) => {
      const c = new Client({ name: 'bench-bare', version: '0' }, { versionNegotiation: { mode: 'auto' } });
      await c.connect(s.client);
      await c.listTools();
      return c;
    }),
  );
  const call = async (i: number) => {
    const r = (await clients[i]!.callTool({ name: tool, arguments: { ticks: 1 } })) as {
      structuredContent?: { status?: string };
    };
    if (r.structuredContent?.status !== 'completed') throw new Error(`bare call: ${JSON.stringify(r)}`);
  };
  await saturate(n, call, 0.5);
  const perSec = await saturate(n, call, SECONDS);
  for (const c of clients) await c.close();
  for (const s of sims) await s.close();
  return perSec;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mhs-throughput-'));
  let last = { g: NaN, b: NaN, e: NaN };
  try {
    process.stdout.write(`throughput: in-process endpoints, ${SECONDS} s per figure, SQLite synchronous=FULL\n`);
    for (const n of COUNTS) {
      const g = await governed(n, dir);
      const b = await bare(n);
      process.stdout.write(
        `  ${String(n).padStart(2)} endpoints  governed ${g.perSec.toFixed(0)}/s  bare ${b.toFixed(0)}/s  ratio ${(g.perSec / b).toFixed(2)}  entries/fsync ${g.entriesPerFsync.toFixed(1)}\n`,
      );
      last = { g: g.perSec, b, e: g.entriesPerFsync };
    }
    process.stdout.write(
      `throughput governed ${last.g.toFixed(0)}/s bare ${last.b.toFixed(0)}/s ratio ${(last.g / last.b).toFixed(2)} entries/fsync ${last.e.toFixed(1)}\n`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
process.exit(0);
