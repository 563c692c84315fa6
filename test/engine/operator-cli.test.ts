// Guarantees (issue 18 item 6; HOST-046, 047, 071, 094): the operator's safety actions on the command line, over the
// same services as the console and against a real simulator whose manifest the host admitted earlier (here by
// `serve`): `mhs-host estop` is refused for a device not on the trusted e-stop allow-list, `estop-allow` puts it on
// the list (recorded), `estop` then engages the device's stop with no approval and records the request/receipt pair
// with the human operator, and `reset` is a separate recorded action that releases it. `permits list --all` shows
// the permit an approved command used, and revoking a used permit is refused with a clear code.
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';

// Each step is a CLI process; on a busy machine a few of them take a while.
vi.setConfig({ testTimeout: 120_000 });
import { ErrorCode } from '../../src/core/index.js';
import { callMhs, connectMcpClient } from '../helpers/sim.js';
import { cli, ledgerEntries, startCli, startMhsHost } from '../helpers/mhs-host.js';
import type { MhsHost } from '../helpers/mhs-host.js';

let host: MhsHost<'belt' | 'lh'>;

beforeAll(async () => {
  host = await startMhsHost({
    prefix: 'opcli',
    sims: { belt: ['conveyor', ['--operator-tools']], lh: ['liquid-handler', ['--operator-tools']] },
  });
}, 120_000);

afterAll(async () => {
  await host?.stop();
});

const op = () => ['--operator', 'alice', '--db', host.dbPath];

async function engaged(): Promise<boolean> {
  const c = await connectMcpClient({ mcpUrl: host.sims.belt.mcpUrl });
  try {
    const s = await callMhs(c, 'mhs__safety', { device_id: 'conveyor-workcell' });
    return (s.body.estop as { engaged: boolean }).engaged;
  } finally {
    await c.close();
  }
}

describe('mhs-host estop, estop-allow, reset', () => {
  test('HOST-094: a device not on the allow-list is refused; nothing is stopped', async () => {
    const r = await cli(['estop', host.connectors.belt, 'conveyor-workcell', ...op()]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(ErrorCode.HOST_POLICY_DENIED);
    expect(await engaged()).toBe(false);
  });

  test('HOST-094, HOST-046, HOST-071: allow-list, stop with no approval, then a separate reset, each recorded', async () => {
    const allow = await cli(['estop-allow', host.sims.belt.endpointId, 'conveyor-workcell', ...op()]);
    expect(allow.code, allow.stderr).toBe(0);
    const stop = await cli(['estop', host.connectors.belt, 'conveyor-workcell', ...op()]);
    expect(stop.code, stop.stderr).toBe(0);
    expect(stop.stdout).toMatch(/e-stop engaged on conveyor-workcell: receipt rcp_\w+ completed/);
    expect(await engaged()).toBe(true);
    const reset = await cli(['reset', host.connectors.belt, 'conveyor-workcell', ...op()]);
    expect(reset.code, reset.stderr).toBe(0);
    expect(await engaged()).toBe(false);
    const entries = (await ledgerEntries(host.dbPath)).filter((e) => e.device_id === 'conveyor-workcell');
    const kinds = entries.map((e) => (e.kind === 'operator.enable' ? `${e.kind}:${String(e.scope)}` : e.kind));
    expect(kinds).toEqual(
      expect.arrayContaining([
        'operator.enable:estop',
        'estop.request',
        'estop.receipt',
        'reset.request',
        'reset.receipt',
      ]),
    );
    const request = entries.find((e) => e.kind === 'estop.request')!;
    expect(request.operator).toEqual({ kind: 'human', id: 'alice', name: 'alice' });
    expect(entries.some((e) => e.kind === 'approval')).toBe(false);
  });

  test('an unknown endpoint or device is a clear error', async () => {
    const r = await cli(['estop', 'mhs://nowhere', 'x', ...op()]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(ErrorCode.HOST_ENDPOINT_UNKNOWN);
    const d = await cli(['estop-allow', host.connectors.belt, 'no-such-device', ...op()]);
    expect(d.code).toBe(1);
    expect(d.stderr).toContain(ErrorCode.NOT_FOUND);
    const noOp = await cli(['reset', host.connectors.belt, 'conveyor-workcell', '--db', host.dbPath], {
      MHS_OPERATOR: '',
    });
    expect(noOp.stderr).toContain(ErrorCode.VALIDATION_ERROR);
  });
});

describe('mhs-host permits', () => {
  test('HOST-047: list shows the permit an approved command used; revoking a used permit is refused', async () => {
    const invoke = startCli([
      'invoke',
      host.connectors.lh,
      'liquid-handler',
      'cap.liquid.aspirate.v1',
      '--input',
      '{"volume_ul":10}',
      '--db',
      host.dbPath,
    ]);
    const [, id] = (await invoke.waitStderr(/(apr_[0-9A-Z]{26})/)) as unknown as [string, string];
    expect((await cli(['approvals', 'approve', id, ...op()])).code).toBe(0);
    expect((await invoke.done).code).toBe(0);
    const listed = await cli(['permits', 'list', '--all', '--json', '--db', host.dbPath]);
    const permits = (
      JSON.parse(listed.stdout) as { permits: Array<{ permit_id: string; approval_id: string; state: string }> }
    ).permits;
    const used = permits.find((p) => p.approval_id === id)!;
    expect(used.state).not.toBe('issued');
    expect((await cli(['permits', 'list', '--db', host.dbPath])).stdout).not.toContain(used.permit_id);
    const revoke = await cli(['permits', 'revoke', used.permit_id, ...op()]);
    expect(revoke.code).toBe(1);
    expect(revoke.stderr).toContain(ErrorCode.CONFLICT);
    expect((await cli(['permits', 'revoke', 'prm_bad', ...op()])).stderr).toContain(ErrorCode.VALIDATION_ERROR);
  });
});
