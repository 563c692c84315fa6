// Guarantees (HOST-091 across host processes): a device gate is held in the store, so a second host process on
// the same store cannot send an effectful command to a device while another process's command on it is unsettled:
// its `mhs-host invoke` fails MHS.HOST.DEVICE_GATE_CLOSED naming that command, journals no intent and sends
// nothing. While the owning process runs, the second one's start-up recovery leaves that command alone (no
// command.unknown, no reconcile under its feet) and `mhs-host reconcile` reports the gate as held by a running
// process, and `mhs-host ledger gates` lists the gate with its owner running. Once the owner is gone (SIGKILL),
// `ledger gates` shows it gone, `mhs-host reconcile` settles the command from the endpoint (not executed) and the
// device takes commands again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/core/index.js';
import { cli, ledgerEntries, startCli, startMhsHost } from '../helpers/mhs-host.js';
import type { MhsHost } from '../helpers/mhs-host.js';
import { callMhs, connectMcpClient } from '../helpers/sim.js';

let host: MhsHost<'conv'>;
const DEVICE = 'conveyor-workcell';
const CAP = 'cap.world.step.v1';

beforeAll(async () => {
  // The simulator accepts the first call and never answers it: a command in flight for as long as we need.
  host = await startMhsHost({ prefix: 'xgate', sims: { conv: ['conveyor', ['--stall', '1']] }, serve: false });
}, 120_000);

afterAll(async () => {
  await host?.stop();
});

const invokeArgs = (extra: string[] = []) => [
  'invoke',
  host.connectors.conv,
  DEVICE,
  CAP,
  '--input',
  '{"ticks":1}',
  '--db',
  host.dbPath,
  ...extra,
];

async function counters(): Promise<{ executions: Record<string, number>; capability_calls: number }> {
  const c = await connectMcpClient({ mcpUrl: host.sims.conv.mcpUrl });
  try {
    const r = await callMhs(c, 'mhs__read', { device_id: DEVICE, resource: '_counters' });
    return r.body.state as { executions: Record<string, number>; capability_calls: number };
  } finally {
    await c.close();
  }
}
const executions = async () => (await counters()).executions;

const kindsOf = async (commandId: string) =>
  (await ledgerEntries(host.dbPath)).filter((e) => e.command_id === commandId).map((e) => e.kind);

describe('device gates shared by host processes on one store', () => {
  it('HOST-091: a second process is refused while the first holds the gate, and takes the device once the first is gone and reconciled', async () => {
    const first = startCli(invokeArgs(['--deadline-ms', '30000']));
    // Until its call has reached the endpoint (which holds it unanswered).
    while ((await counters()).capability_calls < 1) await new Promise((r) => setTimeout(r, 50));
    const held = (await ledgerEntries(host.dbPath)).find((e) => e.kind === 'command.intent')?.command_id as string;
    expect(held).toMatch(/^cmd_/);
    const before = await executions();

    const second = await cli(invokeArgs());
    expect(second.code).not.toBe(0);
    expect(second.stderr).toContain(`error ${ErrorCode.HOST_DEVICE_GATE_CLOSED}:`);
    expect(second.stderr).toContain(held);
    expect(second.stderr).not.toMatch(/\n\s+at /);
    const entries = await ledgerEntries(host.dbPath);
    expect(entries.filter((e) => e.kind === 'command.intent').map((e) => e.command_id)).toEqual([held]);
    // Left to its owner: the second process recorded nothing about the first one's command.
    expect(await kindsOf(held)).toEqual(['command.intent']);
    expect(await executions()).toEqual(before);

    const whileAlive = await cli(['reconcile', host.connectors.conv, '--db', host.dbPath]);
    expect(whileAlive.code).toBe(1);
    expect(whileAlive.stdout).toBe('');
    expect(whileAlive.stderr).toMatch(
      new RegExp(`gate shut: ${DEVICE} by ${held} \\(in_flight, .*its host process is running\\)`),
    );
    expect(await kindsOf(held)).toEqual(['command.intent']);

    const gates = async () =>
      (await cli(['ledger', 'gates', '--db', host.dbPath])).stdout
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(await gates()).toEqual([
      expect.objectContaining({ device_id: DEVICE, command_id: held, reason: 'in_flight', owner_running: true }),
    ]);

    first.child.kill('SIGKILL');
    await first.done;
    expect(await gates()).toEqual([expect.objectContaining({ command_id: held, owner_running: false })]);

    // Issue 16: --wait, since "no record" settles it only once its deadline has passed since an upper bound of its send (its takeover here).
    const rec = await cli(['reconcile', host.connectors.conv, '--db', host.dbPath, '--wait']);
    expect(rec.code).toBe(0);
    const lines = rec.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toEqual([{ command_id: held, device_id: DEVICE, outcome: 'not_executed', method: 'operations' }]);
    expect(rec.stderr).toContain('every device gate open');
    const kinds = await kindsOf(held);
    expect(kinds.slice(0, 3)).toEqual(['command.intent', 'command.unknown', 'reconcile']);
    expect(new Set(kinds.slice(2))).toEqual(new Set(['reconcile']));

    const after = await cli(invokeArgs());
    expect(after.code).toBe(0);
    expect(JSON.parse(after.stdout)).toMatchObject({ status: 'completed', device_id: DEVICE });
    expect((await executions())[held] ?? 0).toBe(0);
  }, 150_000);
});
