// Guarantees: wire contract §10 / HOST-085: a projection started with `--replay BUNDLE` forces sessions
// to mode "replay", answers matching calls with the recorded status, output, revisions and state_hash
// without touching a device, rejects a non-matching call with MHS.REPLAY.DIVERGED + details.expected,
// and keeps a fresh, valid evidence chain.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { H } from '../../src/core/index.js';
import { callMhs, connectMcpClient, startSimHttp, type SimHttp } from '../helpers/sim.js';

// Child processes start slowly on a loaded machine (2 cores shared with other suites).
vi.setConfig({ hookTimeout: 120_000, testTimeout: 120_000 });

const STEP = 'mhs__cap__conveyor-workcell__cap_world_step_v1';

describe('replay mode (§10)', () => {
  const sims: SimHttp[] = [];
  const clients: Client[] = [];
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await Promise.all(sims.map((s) => s.stop()));
  });

  it('HOST-085: replays recorded receipts, labels them replay, and diverges on a different call', async () => {
    const live = await startSimHttp('conveyor', ['--seed', '7']);
    sims.push(live);
    const lc = await connectMcpClient({ mcpUrl: live.mcpUrl });
    clients.push(lc);
    // A live endpoint asked for a replay session still executes: it reports the session as live (HOST-085).
    const asked = await callMhs(lc, 'mhs__session', { action: 'open', device_id: 'conveyor-workcell', mode: 'replay' });
    expect(asked.body['mode']).toBe('live');
    await callMhs(lc, 'mhs__session', { action: 'close', session_id: asked.body['session_id'] });
    const inputs = [{ ticks: 2 }, { ticks: 5 }, { ticks: 1 }];
    const recorded = [];
    for (const i of inputs) recorded.push((await callMhs(lc, STEP, i)).body);
    const bundle = (await callMhs(lc, 'mhs__evidence', { action: 'export' })).body;
    const file = join(mkdtempSync(join(tmpdir(), 'mhs-replay-')), 'bundle.json');
    writeFileSync(file, JSON.stringify(bundle));

    const rp = await startSimHttp('conveyor', ['--replay', file]);
    sims.push(rp);
    const rc = await connectMcpClient({ mcpUrl: rp.mcpUrl });
    clients.push(rc);
    const s = await callMhs(rc, 'mhs__session', { action: 'open', device_id: 'conveyor-workcell', mode: 'live' });
    expect(s.body['mode']).toBe('replay');
    const sid = s.body['session_id'];

    const wrong = await callMhs(rc, STEP, { ticks: 9, _mhs: { session_id: sid } });
    expect(wrong.isError).toBe(false);
    expect(wrong.body['status']).toBe('rejected');
    expect(wrong.body['error']).toMatchObject({
      mhs_code: 'MHS.REPLAY.DIVERGED',
      details: { expected: { capability_id: 'cap.world.step.v1', input_digest: H(inputs[0]) } },
    });

    for (const [k, i] of inputs.entries()) {
      const r = (await callMhs(rc, STEP, { ...i, _mhs: { session_id: sid } })).body;
      const rec = recorded[k] as Record<string, unknown>;
      expect(r['mode']).toBe('replay');
      for (const f of ['status', 'output', 'revisions', 'state_hash', 'input_digest']) expect(r[f], f).toEqual(rec[f]);
    }
    const counters = await callMhs(rc, 'mhs__read', { device_id: 'conveyor-workcell', resource: '_counters' });
    expect((counters.body['state'] as Record<string, unknown>)['total']).toBe(0);
    const exported = (await callMhs(rc, 'mhs__evidence', { action: 'export' })).body;
    expect(exported['genesis_digest']).not.toBe(bundle['genesis_digest']);
    expect((await callMhs(rc, 'mhs__evidence', { action: 'verify' })).body).toEqual({ ok: true });
  });
});
