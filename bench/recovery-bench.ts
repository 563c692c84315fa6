/**
 * `npm run bench:recovery [-- --entries N]`: host start-up against a long ledger (issue 21 item 4). Builds a SQLite
 * store of N entries (default 1,000,000) through the ledger's own writer in batches: one unsettled intent first (far
 * back), then settled commands (intent + completed receipt). Then starts the host runtime (`openHostRuntime`: store,
 * migrations, ledger, operator services, engine start-up recovery) in a fresh child process, on an empty store and
 * on the N-entry store, rounds alternating, and reports the wall time until the runtime is up and the heap it added
 * (heap used after start-up, before any collection, minus the heap used before it).
 * Last line: `recovery entries <N> empty <t> s <h> MiB full <t> s <h> MiB above-empty <dt> s <dh> MiB` (medians).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { RealClock } from '../src/core/index.js';
import { openHostRuntime } from '../src/engine/host-runtime.js';
import { openDb, openLedger } from '../src/ledger/index.js';
import type { LedgerAppend } from '../src/ledger/index.js';

const MIB = 1024 * 1024;
const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};

/** The child: one start-up of the host runtime on the store at `path`; prints `{ s, heapMiB }`. */
async function child(path: string): Promise<void> {
  (globalThis as { gc?: () => void }).gc?.();
  const h0 = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  const rt = await openHostRuntime({ db: path });
  const s = (performance.now() - t0) / 1000;
  const heapMiB = (process.memoryUsage().heapUsed - h0) / MIB;
  const unsettled = rt.engine.pending().length;
  await rt.close();
  process.stdout.write(`${JSON.stringify({ s, heapMiB, unsettled })}\n`);
}

const intent = (n: number): LedgerAppend => ({
  kind: 'command.intent',
  command_id: `cmd_${n}`,
  endpoint_id: 'mhs://bench/recovery',
  device_id: `dev_${n % 8}`,
  capability_id: 'cap.world.step.v1',
  tool: 'conveyor_workcell__cap_world_step_v1',
  session_id: `ses_${n % 97}`,
  input_digest: `sha256:${n.toString(16).padStart(64, '0')}`,
  input: { ticks: 1 },
  effect: 'actuate',
  deadline_ms: 5_000,
});
const receipt = (n: number): LedgerAppend => ({
  kind: 'receipt',
  command_id: `cmd_${n}`,
  endpoint_id: 'mhs://bench/recovery',
  receipt: { status: 'completed', command_id: `cmd_${n}`, operation_id: `op_${n}`, result: { ticks: 1 } },
});

/** A store of about `entries` entries: one unsettled intent first, then settled commands. */
async function build(path: string, entries: number): Promise<void> {
  const db = await openDb(path);
  const ledger = await openLedger(db, { clock: new RealClock() });
  if (entries > 0) await ledger.append(intent(0));
  const BATCH = 2_500; // commands per batch: 5,000 entries per commit
  const t0 = performance.now();
  for (let n = 1, written = 2; written < entries;) {
    const k = Math.min(BATCH, Math.ceil((entries - written) / 2));
    await ledger.appendBatch(Array.from({ length: k }, (_, i) => [intent(n + i), receipt(n + i)]).flat());
    n += k;
    written += 2 * k;
    if (n % 100_001 < BATCH)
      process.stderr.write(`  built ${written} entries (${((performance.now() - t0) / 1000).toFixed(0)} s)\n`);
  }
  ledger.dispose();
  await db.close();
}

function runChild(path: string): Promise<{ s: number; heapMiB: number; unsettled: number }> {
  return new Promise((resolve, reject) => {
    const c = spawn(
      process.execPath,
      [...process.execArgv, '--expose-gc', fileURLToPath(import.meta.url), '--child', path],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.on('error', reject);
    c.on('close', (code) => {
      try {
        resolve(JSON.parse(out.trim().split('\n').at(-1) ?? '') as { s: number; heapMiB: number; unsettled: number });
      } catch {
        reject(new Error(`child exited ${code}: ${out.slice(-300)}`));
      }
    });
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

const childPath = arg('--child');
if (childPath) await child(childPath);
else {
  const entries = Number(arg('--entries') ?? 1_000_000);
  const rounds = Number(arg('--rounds') ?? 3);
  const dir = mkdtempSync(join(tmpdir(), 'mhs-recovery-bench-'));
  try {
    const empty = join(dir, 'empty.db');
    const full = join(dir, 'full.db');
    await build(empty, 0);
    const t0 = performance.now();
    await build(full, entries);
    process.stdout.write(
      `recovery: ledger of ${entries} entries built in ${((performance.now() - t0) / 1000).toFixed(1)} s; ${rounds} rounds\n`,
    );
    const r = { empty: [] as Array<{ s: number; heapMiB: number }>, full: [] as Array<{ s: number; heapMiB: number }> };
    for (let i = 0; i < rounds; i++)
      for (const which of (i % 2 ? ['full', 'empty'] : ['empty', 'full']) as Array<'empty' | 'full'>) {
        const x = await runChild(which === 'empty' ? empty : full);
        if (which === 'full' && x.unsettled !== 1) throw new Error(`expected 1 unsettled command, got ${x.unsettled}`);
        r[which].push(x);
        process.stdout.write(`  round ${i + 1} ${which}: ${x.s.toFixed(3)} s heap ${x.heapMiB.toFixed(1)} MiB\n`);
      }
    const m = (w: 'empty' | 'full', k: 's' | 'heapMiB') => median(r[w].map((x) => x[k]));
    process.stdout.write(
      `recovery entries ${entries} empty ${m('empty', 's').toFixed(3)} s ${m('empty', 'heapMiB').toFixed(1)} MiB ` +
        `full ${m('full', 's').toFixed(3)} s ${m('full', 'heapMiB').toFixed(1)} MiB ` +
        `above-empty ${(m('full', 's') - m('empty', 's')).toFixed(3)} s ${(m('full', 'heapMiB') - m('empty', 'heapMiB')).toFixed(1)} MiB\n`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
