/**
 * `npm run bench:wal-pages`: how many WAL pages (4 KB frames, each fsynced) a governed call writes, and into which
 * table or index (issue 21). One in-process conveyor endpoint makes sequential governed calls through the engine on
 * a real SQLite file with automatic checkpoints off; the WAL's frames are then read back (each frame header names its
 * page) and every page is attributed to its B-tree with SQLite's `dbstat` table.
 * Last line: `wal-pages per-call <frames> per-entry <frames> commits/call <c>`.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { RealClock } from '../src/core/index.js';
import { createEngine, openOperatorRuntime } from '../src/engine/index.js';
import { openDb, openLedger } from '../src/ledger/index.js';
import { connectMemorySim } from './in-process-sim.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 200);
/** Endpoints calling at once (their entries then share commits, as under load). */
const ENDPOINTS = Number(process.env.BENCH_ENDPOINTS ?? 1);

interface Frame {
  page: number;
  commit: boolean;
}

/** The frames of a WAL file: the page each one holds and whether it ends a transaction (RFC-less: sqlite.org/fileformat2.html §4). */
function walFrames(file: string): { pageSize: number; frames: Frame[] } {
  const b = readFileSync(file);
  const pageSize = b.readUInt32BE(8);
  const frames: Frame[] = [];
  for (let at = 32; at + 24 + pageSize <= b.length; at += 24 + pageSize)
    frames.push({ page: b.readUInt32BE(at), commit: b.readUInt32BE(at + 4) !== 0 });
  return { pageSize, frames };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mhs-wal-pages-'));
  const file = join(dir, 'host.db');
  try {
    const clock = new RealClock();
    const db = await openDb(file, { sqlite: { synchronous: 'FULL' } });
    await db.exec('PRAGMA wal_autocheckpoint = 0');
    const ledger = await openLedger(db, { clock });
    const operator = await openOperatorRuntime(db, clock);
    const engine = createEngine({ ledger, clock, gate: operator.services.gate });
    await engine.start();
    const sims = await Promise.all(Array.from({ length: ENDPOINTS }, (_, i) => connectMemorySim(`wal-pages-${i}`)));
    const ids: string[] = [];
    for (const s of sims) ids.push((await engine.attach(s.conn)).endpointId);
    const call = async (i: number) => {
      const r = await engine.invoke({
        endpointId: ids[i] as string,
        deviceId: 'conveyor-workcell',
        capabilityId: 'cap.world.step.v1',
        input: { ticks: 1 },
      });
      if (r.receipt.status !== 'completed') throw new Error(`governed call: ${r.receipt.status}`);
      await r.recorded;
    };
    const each = async (n: number) =>
      Promise.all(
        ids.map(async (_, i) => {
          for (let k = 0; k < n; k++) await call(i);
        }),
      );
    await each(20); // sessions open, first pages allocated
    await db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    const seq0 = (await ledger.head()).seq;
    await each(Math.ceil(CALLS / ENDPOINTS));
    const calls = Math.ceil(CALLS / ENDPOINTS) * ENDPOINTS;
    const entries = (await ledger.head()).seq - seq0;
    const { frames } = walFrames(`${file}-wal`);
    await engine.stop();
    for (const s of sims) await s.close();
    await operator.close();
    await db.close();

    const ro = new Database(file, { readonly: true });
    const owner = new Map<number, string>();
    for (const r of ro.prepare('SELECT name, pageno FROM dbstat').all() as Array<{ name: string; pageno: number }>)
      owner.set(r.pageno, r.name);
    ro.close();
    const byTree = new Map<string, number>();
    for (const f of frames) {
      const name = owner.get(f.page) ?? '(free or page 1)';
      byTree.set(name, (byTree.get(name) ?? 0) + 1);
    }
    const commits = frames.filter((f) => f.commit).length;
    process.stdout.write(
      `wal-pages: ${calls} governed calls (${ENDPOINTS} endpoints, each sequential), ${entries} ledger entries, ${commits} commits\n`,
    );
    for (const [name, n] of [...byTree].sort((a, b) => b[1] - a[1]))
      process.stdout.write(`  ${name.padEnd(36)} ${(n / calls).toFixed(2)} frames/call\n`);
    process.stdout.write(
      `wal-pages per-call ${(frames.length / calls).toFixed(2)} per-entry ${(frames.length / entries).toFixed(2)} commits/call ${(commits / calls).toFixed(2)}\n`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
process.exit(0);
