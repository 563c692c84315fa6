// Guarantees (issue 21 item 7, HOST-051, 054): a task collects only the evidence it produced. The wire has no ranged
// `mhs__evidence` export (shared/spec/mhs-wire.md §9), so a task records its own receipts' chain links (and exports
// no bundle: its cost does not grow with the endpoint's history); the bundle is collected once, before the export
// or when the engine stops; every task's links are entries of that one bundle and the package verifies with them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { RealClock } from '../../src/core/index.js';
import type { Engine, TaskEvidence, TaskResult } from '../../src/engine/index.js';
import { taskEvidence } from '../../src/engine/endpoint-evidence.js';
import { exportPackage, verifyPackage } from '../../src/ledger/index.js';
import type { LedgerEntry } from '../../src/ledger/index.js';
import { openArtifacts } from '../../src/ledger/artifacts.js';
import type { Artifacts } from '../../src/ledger/artifacts.js';
import type { EvidenceBundle } from '../../src/mhs/wire-types.js';
import { connectStdio, openStore, startEngine } from './harness.js';
import type { Store } from './harness.js';

const BELT = 'mhs://test/task-evidence-belt';
const DEVICE = 'conveyor-workcell';
const TASKS = 6;
const clock = new RealClock();
let store: Store;
let artifacts: Artifacts;
let engine: Engine;
const tasks: TaskResult[] = [];
let outDir: string;

const step = (ticks: number) => ({ endpoint: BELT, device: DEVICE, capability: 'cap.world.step.v1', input: { ticks } });
const endpointExports = async (): Promise<LedgerEntry[]> =>
  (await store.ledger.range(0)).filter((e) => e.kind === 'evidence.export' && e.source === 'endpoint');
const linksOf = (t: TaskResult): TaskEvidence => {
  expect(t.evidence).toHaveLength(1);
  const ev = t.evidence![0]!;
  if ('error' in ev) throw new Error(JSON.stringify(ev.error));
  return ev;
};

beforeAll(async () => {
  store = await openStore();
  artifacts = await openArtifacts(store.db, { clock });
  engine = await startEngine(store, { artifacts });
  await engine.attach(await connectStdio('conveyor', ['--endpoint-id', BELT], 'mhs-task-ev-belt'));
  for (let i = 0; i < TASKS; i++) tasks.push(await engine.runTask({ name: `task ${i}`, steps: [step(1), step(2)] }));
  outDir = join(mkdtempSync(join(tmpdir(), 'mhs-task-ev-')), 'pkg');
}, 60_000);
afterAll(async () => {
  await engine?.stop();
  await store?.close();
  if (outDir) rmSync(join(outDir, '..'), { recursive: true, force: true });
});

describe('a task collects only the evidence it produced (issue 21)', () => {
  test("task N's evidence is exactly task N's receipts' links; no task exported a bundle", async () => {
    expect(tasks.every((t) => t.ok)).toBe(true);
    expect(await endpointExports()).toEqual([]);
    expect(await artifacts.latestEvidenceBundles()).toEqual([]);
    const seen = new Set<number>();
    const receipts = (await store.ledger.range(0)).filter((e) => e.kind === 'receipt');
    for (const t of tasks) {
      const ev = linksOf(t);
      expect(ev.endpointId).toBe(BELT);
      expect(ev.receipts.map((r) => r.command_id)).toEqual(t.steps.map((s) => s.commandId));
      for (const [i, link] of ev.receipts.entries()) {
        const s = t.steps[i]!;
        expect(link).toEqual({ command_id: s.commandId, ...s.receipt!.evidence });
        expect(seen.has(link.seq)).toBe(false); // nothing of an earlier task
        seen.add(link.seq);
        // The same link is in the host ledger's receipt entry, committed with the receipt.
        expect(receipts.find((e) => e.command_id === s.commandId)?.endpoint_evidence).toEqual(s.receipt!.evidence);
      }
    }
    // Later tasks' links follow earlier ones in the endpoint's chain.
    const firsts = tasks.map((t) => linksOf(t).receipts[0]!.seq);
    expect([...firsts].sort((a, b) => a - b)).toEqual(firsts);
  });

  test('the bundle is collected once before the export; every task link is in it and the package verifies', async () => {
    const collected = await engine.collectPendingEvidence();
    expect(collected).toHaveLength(1);
    expect(await engine.collectPendingEvidence()).toEqual([]); // nothing new since
    expect(await endpointExports()).toHaveLength(1);
    const [bundle] = (await artifacts.latestEvidenceBundles()) as [EvidenceBundle];
    const bySeq = new Map(bundle.entries.map((e) => [e.seq, e]));
    for (const t of tasks)
      for (const link of linksOf(t).receipts) {
        const e = bySeq.get(link.seq);
        expect(e).toMatchObject({ kind: 'receipt', digest: link.digest, prev_digest: link.prev_digest });
        expect((e!.body as { command_id?: string }).command_id).toBe(link.command_id);
      }
    const ex = await exportPackage({ db: store.db, outDir, clock });
    expect(ex.status).toBe('verified');
    const check = await verifyPackage(outDir);
    expect(check.problems).toEqual([]);
    expect(check.checked.receipts_cross_checked).toBe(TASKS * 2);
  });

  test('a task after the collection marks the endpoint again; stopping the engine collects its bundle once', async () => {
    const t = await engine.runTask({ name: 'last', steps: [step(1)] });
    expect(t.ok).toBe(true);
    expect(await endpointExports()).toHaveLength(1);
    await engine.stop();
    expect(await endpointExports()).toHaveLength(2);
    const [bundle] = (await artifacts.latestEvidenceBundles()) as [EvidenceBundle];
    const link = linksOf(t).receipts[0]!;
    expect(bundle.entries.find((e) => e.seq === link.seq)?.digest).toBe(link.digest);
  });

  test('a receipt without a well-formed evidence link is an evidence failure of its endpoint, not ok', () => {
    const good = tasks[0]!.steps[0]!;
    const broken = { ...good, commandId: 'cmd_x', receipt: { ...good.receipt!, evidence: { seq: 1 } } };
    const [ev] = taskEvidence([good, broken]);
    expect(ev).toMatchObject({
      endpointId: BELT,
      error: { mhs_code: 'MHS.EVIDENCE.CHAIN_BROKEN', details: { command_id: 'cmd_x' } },
    });
  });
});
