// Guarantees: each fault flag of `mhs-host sim` has the effect a client can observe (issue 2 item 5):
// latency, drop-reply (every / Nth, executed once per _counters), stall (never executed), close-after
// (connection closed over HTTP and stdio), oversize-reply (> 4 MiB frame), corrupt-evidence (verify fails).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { verifyChain, type ChainEntry } from '../../src/core/index.js';
import { callMhs, connectMcpClient, simStdioCommand, startSimHttp, type SimHttp } from '../helpers/sim.js';

// Child processes start slowly on a loaded machine (2 cores shared with other suites).
vi.setConfig({ hookTimeout: 120_000 });

const STEP = 'mhs__cap__conveyor-workcell__cap_world_step_v1';
// Nth-call flags share one process: capability call 1 stalls, 2 is dropped, 3 is oversized.
const FLAGS: Record<string, string[]> = {
  latency: ['--latency-ms', '400'],
  closeAfter: ['--close-after', '2'],
  dropEvery: ['--drop-reply'],
  nth: ['--stall', '1', '--drop-reply', '2', '--oversize-reply', '3', '--corrupt-evidence', '1'],
};

async function executions(c: Client, commandId: string): Promise<number> {
  const r = await callMhs(c, 'mhs__read', { device_id: 'conveyor-workcell', resource: '_counters' });
  return (r.body['state'] as { executions: Record<string, number> }).executions[commandId] ?? 0;
}

describe('fault injection flags', () => {
  const sims: Record<string, SimHttp> = {};
  const clients: Client[] = [];
  const client = async (name: string): Promise<Client> => {
    const c = await connectMcpClient({ mcpUrl: (sims[name] as SimHttp).mcpUrl });
    clients.push(c);
    return c;
  };

  let stdioClient: Promise<Client>;
  beforeAll(async () => {
    // The stdio child starts alongside the HTTP ones (process start dominates this file's time).
    stdioClient = connectMcpClient(simStdioCommand('conveyor', ['--close-after', '1']));
    stdioClient.catch(() => undefined);
    const started = await Promise.all(
      Object.entries(FLAGS).map(async ([k, f]) => [k, await startSimHttp('conveyor', f)] as const),
    );
    for (const [k, s] of started) sims[k] = s;
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await Promise.all(Object.values(sims).map((s) => s.stop()));
  });

  it('--latency-ms delays every reply: a short client timeout fails, a patient client gets the answer', async () => {
    const c = await client('latency');
    await expect(callMhs(c, 'mhs__devices', {}, { timeout: 100 })).rejects.toThrow();
    expect((await callMhs(c, 'mhs__devices', {}, { timeout: 10_000 })).isError).toBe(false);
  });

  it('--close-after N closes the HTTP connection on the call after the Nth', async () => {
    const c = await client('closeAfter');
    expect((await callMhs(c, 'mhs__devices')).isError).toBe(false);
    expect((await callMhs(c, STEP, { ticks: 1 })).isError).toBe(false);
    await expect(callMhs(c, STEP, { ticks: 1 }, { timeout: 5000 })).rejects.toThrow();
  });

  it('--drop-reply executes the command but never answers (HOST-091 lost reply); executed exactly once', async () => {
    const c = await client('dropEvery');
    await expect(
      callMhs(c, STEP, { ticks: 1, _mhs: { command_id: 'cmd_drop_1' } }, { timeout: 1500 }),
    ).rejects.toThrow();
    expect(await executions(c, 'cmd_drop_1')).toBe(1);
  });

  it('--stall N / --drop-reply N / --oversize-reply N act on the Nth capability call only', async () => {
    const c = await client('nth');
    // Call 1 stalls: accepted, never answered, never executed.
    await expect(
      callMhs(c, STEP, { ticks: 1, _mhs: { command_id: 'cmd_stall' } }, { timeout: 1500 }),
    ).rejects.toThrow();
    expect(await executions(c, 'cmd_stall')).toBe(0);
    // Call 2 executes, then its reply is dropped.
    await expect(callMhs(c, STEP, { ticks: 1, _mhs: { command_id: 'cmd_n2' } }, { timeout: 1500 })).rejects.toThrow();
    expect(await executions(c, 'cmd_n2')).toBe(1);
    // Call 3 (the retry of the lost command) answers with a frame over 4 MiB, from retention, without executing.
    const big = await c.callTool({ name: STEP, arguments: { ticks: 1, _mhs: { command_id: 'cmd_n2' } } });
    expect(JSON.stringify(big).length).toBeGreaterThan(4 * 1024 * 1024);
    expect(big.structuredContent).toMatchObject({ status: 'completed', replayed: true });
    expect(await executions(c, 'cmd_n2')).toBe(1);
    // Call 4 is normal again.
    expect((await callMhs(c, STEP, { ticks: 1, _mhs: { command_id: 'cmd_n4' } })).body['status']).toBe('completed');
  });

  it('--close-after N over stdio: the endpoint closes the pipe and exits', async () => {
    const c = await stdioClient;
    clients.push(c);
    const closed = new Promise<void>((resolve) => (c.onclose = () => resolve()));
    expect((await callMhs(c, 'mhs__devices')).isError).toBe(false);
    await expect(callMhs(c, STEP, { ticks: 1 }, { timeout: 5000 })).rejects.toThrow();
    await closed;
  });

  it('--corrupt-evidence SEQ breaks the endpoint chain at SEQ (verify and offline recompute agree)', async () => {
    const c = await client('nth');
    await callMhs(c, STEP, { ticks: 1 });
    expect((await callMhs(c, 'mhs__evidence', { action: 'verify' })).body).toEqual({ ok: false, broken_at: 1 });
    const bundle = (await callMhs(c, 'mhs__evidence', { action: 'export' })).body;
    expect(verifyChain(bundle['entries'] as ChainEntry[])).toMatchObject({ ok: false, broken_at: 1 });
  });
});
