// Guarantees (issue 5: one governed path for the CLI and `serve`; HOST-032, 035, 041, 044, 045, 047):
// `mhs-host invoke` goes through the same policy gate as `serve`. An R2, permit-required call on an HTTP
// endpoint prints its approval (id, endpoint, device, capability, input digest, risk) and waits; an
// `mhs-host approvals approve` from a second process unblocks it and the receipt prints; the ledger shows
// the approval requested and decided on the input digest, then the permit, the intent and the receipt. A
// deny ends the invoke with MHS.HOST.APPROVAL_DENIED; no decision ends it with MHS.HOST.APPROVAL_TIMEOUT
// (recorded expired); an approval given in serve's operator API unblocks a CLI call the same way; dual
// control needs two distinct operators; run-task waits the same way; Ctrl-C withdraws a pending approval
// (recorded voided); bad ids and flags give stable codes, one line, no stack.
/* eslint-disable @typescript-eslint/no-explicit-any -- ledger entries and JSON are read loosely in assertions */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/core/index.js';
import { cli, ledgerEntries, startCli, startMhsHost } from '../helpers/mhs-host.js';
import type { MhsHost } from '../helpers/mhs-host.js';
import { callMhs, connectMcpClient } from '../helpers/sim.js';
import { client } from '../server/serve-helpers.js';

let host: MhsHost<'lh' | 'laser'>;
const NEEDED = /approval needed (apr_[0-9A-HJKMNP-TV-Z]{26})/;

beforeAll(async () => {
  host = await startMhsHost({
    prefix: 'cli-apr',
    sims: { lh: ['liquid-handler', ['--operator-tools']], laser: ['laser', ['--operator-tools']] },
    tokens: { 'apr-op': 'operator' },
  });
}, 180_000);

afterAll(async () => {
  await host?.stop();
});

const aspirate = (volume: number, extra: string[] = []) =>
  startCli([
    'invoke',
    host.connectors.lh,
    'liquid-handler',
    'cap.liquid.aspirate.v1',
    '--input',
    JSON.stringify({ volume_ul: volume }),
    '--db',
    host.dbPath,
    ...extra,
  ]);
const approvals = (args: string[], env: Record<string, string> = {}) =>
  cli(['approvals', ...args, '--db', host.dbPath], env);

async function executions(): Promise<Record<string, number>> {
  const c = await connectMcpClient({ mcpUrl: host.sims.lh.mcpUrl });
  try {
    const r = await callMhs(c, 'mhs__read', { device_id: 'liquid-handler', resource: '_counters' });
    return (r.body.state as any).executions as Record<string, number>;
  } finally {
    await c.close();
  }
}

/** The single-line error a CLI failure prints: `error <code>: ...`, no stack. */
function errorCode(stderr: string): string | undefined {
  const lines = stderr.trim().split('\n');
  expect(stderr).not.toMatch(/\n\s+at /);
  return /^error (\S+):/.exec(lines.find((l) => l.startsWith('error ')) ?? '')?.[1];
}

describe('mhs-host invoke waits for approvals decided with mhs-host approvals', () => {
  it('HOST-041 HOST-045 HOST-047: an R2 permit-required call waits, a second process approves, the receipt prints; ledger: approval on the digest, permit, intent, receipt', async () => {
    const inv = aspirate(40);
    const id = (await inv.waitStderr(NEEDED))[1]!;
    await inv.waitStderr(/waiting up to 600 s/);
    const shown = inv.stderr();
    expect(shown).toContain(host.sims.lh.endpointId);
    expect(shown).toContain('cap.liquid.aspirate.v1');
    expect(shown).toMatch(/risk\s+R2/);
    expect(shown).toContain(`mhs-host approvals approve ${id} --operator`);
    const digest = /digest\s+([0-9a-f]{64})/.exec(shown)![1]!;

    const listed = await approvals(['list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(id);
    const show = await approvals(['show', id, '--json']);
    expect(JSON.parse(show.stdout)).toMatchObject({ approval_id: id, status: 'pending', input_digest: digest });

    const ok = await approvals(['approve', id, '--operator', 'alice']);
    expect(ok.code).toBe(0);
    const done = await inv.done;
    expect(done.code).toBe(0);
    const receipt = JSON.parse(done.stdout) as Record<string, any>;
    expect(receipt).toMatchObject({ status: 'completed', device_id: 'liquid-handler' });
    expect(done.stderr).toContain(`approval ${id} granted by alice`);

    const es = await ledgerEntries(host.dbPath);
    const at = (pred: (e: any) => boolean) => es.findIndex(pred);
    const requested = at((e) => e.kind === 'approval' && e.event === 'requested' && e.approval_id === id);
    const decided = at((e) => e.kind === 'approval' && e.event === 'decided' && e.approval_id === id);
    const permit = at((e) => e.kind === 'permit.issue' && e.approval_id === id);
    const intent = at((e) => e.kind === 'command.intent' && e.approval_id === id);
    expect(es[requested]).toMatchObject({ input_digest: digest, risk_class: 'R2', method: 'human_click' });
    expect(es[decided]).toMatchObject({
      decision: 'approve',
      method: 'human_click',
      principals: [{ kind: 'human', id: 'alice' }],
      input_digest: digest,
    });
    expect(es[intent]).toMatchObject({ input_digest: digest, permit_id: expect.stringMatching(/^prm_/) });
    const rcpt = at((e) => e.kind === 'receipt' && e.command_id === es[intent]!.command_id);
    expect(requested).toBeGreaterThanOrEqual(0);
    expect([requested < decided, decided < permit, permit < intent, intent < rcpt]).toEqual([true, true, true, true]);
    expect((await executions())[es[intent]!.command_id as string]).toBe(1);
  }, 120_000);

  it('HOST-045: a deny ends the invoke with MHS.HOST.APPROVAL_DENIED; nothing is sent', async () => {
    const inv = aspirate(41);
    const id = (await inv.waitStderr(NEEDED))[1]!;
    const before = await executions();
    const no = await approvals(['deny', id, '--reason', 'wrong plate'], { MHS_OPERATOR: 'bob' });
    expect(no.code).toBe(0);
    const done = await inv.done;
    expect(done.code).not.toBe(0);
    expect(errorCode(done.stderr)).toBe(ErrorCode.HOST_APPROVAL_DENIED);
    expect(done.stdout).toBe('');
    expect(await executions()).toEqual(before);
    const es = await ledgerEntries(host.dbPath);
    expect(es.find((e) => e.kind === 'approval' && e.event === 'decided' && e.approval_id === id)).toMatchObject({
      decision: 'deny',
      principals: [{ kind: 'human', id: 'bob' }],
      reason: 'wrong plate',
    });
    expect(es.some((e) => e.kind === 'command.intent' && e.approval_id === id)).toBe(false);
  }, 120_000);

  it('HOST-043: no decision within --approval-timeout ends with MHS.HOST.APPROVAL_TIMEOUT and the request expires', async () => {
    const inv = aspirate(42, ['--approval-timeout', '1500']);
    const id = (await inv.waitStderr(NEEDED))[1]!;
    const done = await inv.done;
    expect(done.code).not.toBe(0);
    expect(errorCode(done.stderr)).toBe(ErrorCode.HOST_APPROVAL_TIMEOUT);
    const show = await approvals(['show', id, '--json']);
    expect(JSON.parse(show.stdout)).toMatchObject({ status: 'expired' });
    // A late approval is refused: the request is settled.
    const late = await approvals(['approve', id, '--operator', 'alice']);
    expect(errorCode(late.stderr)).toBe(ErrorCode.CONFLICT);
  }, 120_000);

  it('HOST-080: run-task waits for the approval of its R2 step the same way and completes once approved', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'mhs-cli-apr-')), 'task.json');
    const step = { endpoint: host.connectors.lh, device: 'liquid-handler', capability: 'cap.liquid.aspirate.v1' };
    writeFileSync(file, JSON.stringify({ name: 'approve me', steps: [{ ...step, input: { volume_ul: 45 } }] }));
    const run = startCli(['run-task', file, '--db', host.dbPath]);
    const id = (await run.waitStderr(NEEDED))[1]!;
    expect((await approvals(['approve', id, '--operator', 'alice'])).code).toBe(0);
    const done = await run.done;
    expect(done.code).toBe(0);
    expect(done.stdout).toContain(`[${host.sims.lh.endpointId}] step 0 → completed`);
    expect(done.stdout).toMatch(/task tsk_\S+: completed/);
  }, 120_000);

  it('HOST-045: Ctrl-C while waiting withdraws the approval (recorded voided); a late approve is refused', async () => {
    const inv = aspirate(44);
    const id = (await inv.waitStderr(NEEDED))[1]!;
    await inv.waitStderr(/waiting up to/);
    inv.child.kill('SIGINT');
    const done = await inv.done;
    expect(done.code).toBe(130);
    expect(done.stderr).toContain(`approval ${id} withdrawn`);
    const show = await approvals(['show', id, '--json']);
    expect(JSON.parse(show.stdout)).toMatchObject({ status: 'voided', reason: 'withdrawn_by_caller' });
    const es = await ledgerEntries(host.dbPath);
    expect(es.find((e) => e.kind === 'approval' && e.event === 'voided' && e.approval_id === id)).toMatchObject({
      reason: 'withdrawn_by_caller',
    });
    expect(errorCode((await approvals(['approve', id, '--operator', 'alice'])).stderr)).toBe(ErrorCode.CONFLICT);
  }, 120_000);

  it('HOST-047: the approval may come from serve’s operator API: the CLI call proceeds with a permit as through serve', async () => {
    const inv = aspirate(43);
    const id = (await inv.waitStderr(NEEDED))[1]!;
    const op = client(host.srv!.url, host.tokens['apr-op']!);
    const pending = (await op.get('/v1/operator/approvals')).body.approvals as any[];
    expect(pending.map((a) => a.approval_id)).toContain(id);
    expect((await op.post(`/v1/operator/approvals/${id}/approve`, {})).status).toBe(200);
    const done = await inv.done;
    expect(done.code).toBe(0);
    expect(JSON.parse(done.stdout)).toMatchObject({ status: 'completed' });
    const es = await ledgerEntries(host.dbPath);
    const intent = es.find((e) => e.kind === 'command.intent' && e.approval_id === id)!;
    expect(es.find((e) => e.kind === 'permit.issue' && e.approval_id === id)).toBeTruthy();
    expect(intent.permit_id).toMatch(/^prm_/);
  }, 120_000);

  it('HOST-035 HOST-044: dual control (R3 laser) needs two distinct operators; the same one twice is refused', async () => {
    const policy = join(mkdtempSync(join(tmpdir(), 'mhs-cli-apr-')), 'policy.json');
    writeFileSync(policy, JSON.stringify({ deployment: { enabled: true, allow_hardware: true } }));
    const inv = startCli([
      'invoke',
      host.connectors.laser,
      'laser',
      'cap.laser.pulse.v1',
      '--input',
      JSON.stringify({ energy_mj: 5, pulses: 1 }),
      '--db',
      host.dbPath,
      '--policy',
      policy,
    ]);
    const id = (await inv.waitStderr(NEEDED))[1]!;
    await inv.waitStderr(/waiting up to/);
    expect(inv.stderr()).toContain('dual_control by two distinct operators');
    const first = await approvals(['approve', id, '--operator', 'alice']);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('1 of 2');
    const again = await approvals(['approve', id, '--operator', 'alice']);
    expect(again.code).not.toBe(0);
    expect(errorCode(again.stderr)).toBe(ErrorCode.FORBIDDEN);
    const second = await approvals(['approve', id, '--operator', 'carol']);
    expect(second.code).toBe(0);
    const done = await inv.done;
    expect(done.code).toBe(0);
    expect(JSON.parse(done.stdout)).toMatchObject({ status: 'completed', device_id: 'laser' });
    const es = await ledgerEntries(host.dbPath);
    expect(es.find((e) => e.kind === 'approval' && e.event === 'decided' && e.approval_id === id)).toMatchObject({
      method: 'dual_control',
      principals: [
        { kind: 'human', id: 'alice' },
        { kind: 'human', id: 'carol' },
      ],
    });
  }, 120_000);

  it('bad ids and flags: stable codes, non-zero exit, one line on stderr', async () => {
    const cases: Array<[string[], Record<string, string>, string]> = [
      [['show', 'not-an-id'], {}, ErrorCode.VALIDATION_ERROR],
      [['approve', 'apr_01JD0000000000000000000000'], { MHS_OPERATOR: '' }, ErrorCode.VALIDATION_ERROR],
      [['approve', 'apr_01JD0000000000000000000000', '--operator', 'alice'], {}, ErrorCode.NOT_FOUND],
      [['list', '--status', 'bogus'], {}, ErrorCode.VALIDATION_ERROR],
      [['list', '--bogus'], {}, ErrorCode.VALIDATION_ERROR],
    ];
    // Independent one-shot processes: run them side by side.
    const runs = await Promise.all(cases.map(([args, env]) => approvals(args, env)));
    runs.forEach((r, i) => {
      const [args, , code] = cases[i]!;
      expect({ args, exit: r.code === 0 ? 0 : 'non-zero', code: errorCode(r.stderr) }).toEqual({
        args,
        exit: 'non-zero',
        code,
      });
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    });
    const badTimeout = await cli(['invoke', 'x', 'y', 'z', '--approval-timeout', 'soon', '--db', host.dbPath]);
    expect(errorCode(badTimeout.stderr)).toBe(ErrorCode.VALIDATION_ERROR);
  }, 120_000);
});
