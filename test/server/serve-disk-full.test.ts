// Guarantees (issue 16, Supervision; HOST-093): with the SQLite store on a small tmpfs that fills up under a running
// `mhs-host serve`, the process stays up, refuses new runs with MHS.HOST.LEDGER_UNAVAILABLE (503), the operator API
// reports the store unavailable, and once space is freed every run accepted before completes with a gap-free event
// log, the ledger verifies and new runs are accepted. Needs root to mount the tmpfs; skipped otherwise.
import { execFileSync } from 'node:child_process';
import { closeSync, copyFileSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/core/index.js';
import { startMhsHost } from '../helpers/mhs-host.js';
import type { MhsHost } from '../helpers/mhs-host.js';
import { client, logProblems, serve } from './serve-helpers.js';
import type { Served } from './serve-helpers.js';

const mountDir = mkdtempSync(join(tmpdir(), 'mhs-full-'));
const mounted = (() => {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', mountDir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
const filler = join(mountDir, 'filler');
let host: MhsHost<'thermo'> | undefined;
let srv: Served | undefined;

const wf = {
  id: 'full-delay',
  name: 'full-delay',
  version: '1',
  nodes: [
    {
      id: 'wait',
      typeId: 'core.delay',
      name: 'wait',
      position: { x: 0, y: 0 },
      config: { durationMs: 500 },
      inputs: {},
    },
  ],
  edges: [],
  triggers: [{ id: 'manual', type: 'manual' }],
  variables: [],
  metadata: {},
  settings: {},
};

function fillDisk(): void {
  const fd = openSync(filler, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (err) {
    if ((err as { code?: string }).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
}

beforeAll(async () => {
  if (!mounted) return;
  host = await startMhsHost({
    prefix: 'full',
    sims: { thermo: ['thermostat'] },
    tokens: { op: 'operator' },
    serve: false,
  });
  const db = join(mountDir, 'host.db');
  copyFileSync(host.dbPath, db);
  srv = await serve(db, ['--no-workflows']);
}, 120_000);

afterAll(async () => {
  await srv?.stop();
  await host?.stop();
  if (mounted) execFileSync('umount', [mountDir]);
  rmSync(mountDir, { recursive: true, force: true });
});

describe.skipIf(!mounted)('a full disk under a running serve', () => {
  it('refuses new runs with LEDGER_UNAVAILABLE, stays up, and recovers with nothing lost', async () => {
    const api = client(srv!.url, host!.tokens.op!);
    expect((await api.post('/v1/workflows', wf)).status).toBe(201);
    fillDisk();
    const accepted: string[] = [];
    let refused: { status: number; body: Record<string, unknown> } | undefined;
    // The WAL may still have room for a few transactions: write until the store says it is full.
    for (let i = 0; i < 500 && !refused; i++) {
      const r = await api.post('/v1/runs', { workflowId: 'full-delay' });
      if (r.status === 201) accepted.push((r.body as { runId: string }).runId);
      else refused = r;
    }
    expect(refused?.status).toBe(503);
    expect(refused?.body.error).toBe(ErrorCode.HOST_LEDGER_UNAVAILABLE);
    expect((await api.get('/v1/operator/ledger?limit=1')).body.status).toMatchObject({ state: 'unavailable' });
    expect(srv!.child.exitCode).toBeNull();

    rmSync(filler);
    for (const runId of accepted) {
      const snap = await api.until(runId, (s) => ['completed', 'failed', 'cancelled'].includes(s.status));
      expect(snap.status).toBe('completed');
      expect(logProblems(await api.events(runId))).toEqual([]);
    }
    const deadline = Date.now() + 30_000;
    while ((await api.get('/v1/operator/ledger?limit=1')).body.status?.state !== 'available' && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 250));
    expect((await api.post('/v1/runs', { workflowId: 'full-delay' })).status).toBe(201);
    expect((await api.post('/v1/operator/ledger/verify')).body).toMatchObject({ ok: true });
    expect(srv!.child.exitCode).toBeNull();
  }, 180_000);
});
