// Guarantees (issue 16, Lifecycle): `mhs-host serve` on a port another process holds exits 1 with
// MHS.HOST.PORT_IN_USE, names the port and the remedy, and touches nothing on the shared store first: no endpoint
// attached (no disclosure or other ledger entry), no run resumed (no run.resuming event). Real processes, a real
// SQLite file.
import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, RealClock } from '../../src/core/index.js';
import { openDb } from '../../src/ledger/index.js';
import { createTokenStore } from '../../src/policy/tokens.js';
import { startHostServer } from '../../src/server/host-server.js';
import { ledgerEntries, startCli, startMhsHost } from '../helpers/mhs-host.js';
import type { MhsHost } from '../helpers/mhs-host.js';
import { client, serve, tempDb } from './serve-helpers.js';

let host: MhsHost<'thermo'>;
let blocker: Server;

const wf = {
  id: 'port-wait',
  name: 'port-wait',
  version: '1',
  nodes: [
    {
      id: 'wait',
      typeId: 'core.delay',
      name: 'wait',
      position: { x: 0, y: 0 },
      config: { durationMs: 600_000 },
      inputs: {},
    },
  ],
  edges: [],
  triggers: [{ id: 'manual', type: 'manual' }],
  variables: [],
  metadata: {},
  settings: {},
};

beforeAll(async () => {
  host = await startMhsHost({
    prefix: 'port',
    sims: { thermo: ['thermostat'] },
    tokens: { c: 'client', op: 'operator' },
    serve: false,
  });
  blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
}, 120_000);

afterAll(async () => {
  blocker?.close();
  await host?.stop();
});

describe('serve on a port in use', () => {
  it('exits 1 with MHS.HOST.PORT_IN_USE before attaching endpoints or resuming runs', async () => {
    // A run left unfinished by an earlier serve: the next start on a free port would resume it.
    const first = await serve(host.dbPath, ['--no-workflows']);
    const api = client(first.url, host.tokens.c!);
    // Registering a workflow is an operator action (issue 20).
    expect((await client(first.url, host.tokens.op!).post('/v1/workflows', wf)).status).toBe(201);
    const { runId } = (await api.post('/v1/runs', { workflowId: 'port-wait' })).body as { runId: string };
    await api.until(runId, (s) => s.status === 'running');
    expect(await first.stop()).toBe(0);

    const before = { ledger: (await ledgerEntries(host.dbPath)).length };
    const port = (blocker.address() as { port: number }).port;
    const proc = startCli(['serve', '--port', String(port), '--db', host.dbPath, '--no-workflows']);
    const done = await Promise.race([
      proc.done,
      new Promise<'still running'>((r) => setTimeout(() => r('still running'), 30_000)),
    ]);
    if (done === 'still running') proc.child.kill('SIGKILL');
    expect(done).not.toBe('still running');
    const { code, stderr } = done as { code: number | null; stderr: string };
    expect(code).toBe(1);
    expect(stderr).toContain(ErrorCode.HOST_PORT_IN_USE);
    expect(stderr).toContain(String(port));
    expect(stderr).toContain('--port');

    // Nothing written: no disclosure, no recovery entry, no run.resuming.
    expect((await ledgerEntries(host.dbPath)).length).toBe(before.ledger);
    const again = await serve(host.dbPath, ['--no-workflows']);
    try {
      const events = await client(again.url, host.tokens.c!).events(runId);
      expect(events.filter((e) => e.type === 'run.resuming')).toHaveLength(1); // this start's, not the refused one's
    } finally {
      await again.stop();
    }
  }, 120_000);

  it('a port taken after the check: startHostServer halts what it resumed and raises MHS.HOST.PORT_IN_USE', async () => {
    const clock = new RealClock();
    const db = await openDb(tempDb());
    const port = (blocker.address() as { port: number }).port;
    try {
      await expect(
        startHostServer({ db, clock, tokens: createTokenStore(db, clock), port, workflows: false }),
      ).rejects.toMatchObject({ code: ErrorCode.HOST_PORT_IN_USE, details: { port, host: '127.0.0.1' } });
    } finally {
      await db.close();
    }
  });
});
