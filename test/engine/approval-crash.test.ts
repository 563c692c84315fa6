// Guarantees (issue 16 item 4; HOST-041, 047, 070, 093), with a real host process SIGKILLed at a printed point, a
// real HTTP simulator (liquid-handler: R2, human approval, single-use permit through the operator route) and a real
// SQLite store: a host killed after its governed call took the approval and its permit and before the intent was
// journalled sent nothing; on restart the approval reads `approved_not_executed` (recorded with
// MHS.HOST.INTERRUPTED), its permit is revoked host side and at the endpoint (recorded), no permit is outstanding,
// and a fresh call of the same step asks for a new approval instead of running on the stale one.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { ErrorCode } from '../../src/core/index.js';
import { openHostRuntime } from '../../src/engine/host-runtime.js';
import type { HostRuntime } from '../../src/engine/host-runtime.js';
import type { EvidenceBundle } from '../../src/mhs/wire-types.js';
import type { ApprovalRequest } from '../../src/policy/index.js';
import { entryArgs } from '../helpers/cli-entry.js';
import { startMhsHost } from '../helpers/mhs-host.js';
import type { MhsHost } from '../helpers/mhs-host.js';
import { REPO_ROOT, callMhs, connectMcpClient } from '../helpers/sim.js';

const DEVICE = 'liquid-handler';
const STEP = 'approval-crash-step-1';

let host: MhsHost<'lh'>;
let observer: Client;
let rt: HostRuntime | undefined;

beforeAll(async () => {
  host = await startMhsHost({
    prefix: 'apcrash',
    sims: { lh: ['liquid-handler', ['--operator-tools']] },
    serve: false,
  });
  observer = await connectMcpClient({ mcpUrl: host.sims.lh.mcpUrl });
}, 120_000);

afterAll(async () => {
  await rt?.close();
  await observer?.close();
  await host?.stop();
});

/** Runs the host child until it prints `BEFORE_INTENT`, SIGKILLs it there and returns the approval and permit. */
async function crashBeforeIntent(): Promise<{ approvalId: string; permitId: string }> {
  const child = spawn(
    process.execPath,
    [
      ...entryArgs('test/engine/fixtures/approval-child.ts'),
      host.dbPath,
      host.connectors.lh,
      host.sims.lh.endpointId,
      STEP,
    ],
    { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise((r) => child.once('exit', r));
  let found: { approvalId: string; permitId: string } | undefined;
  for await (const line of createInterface({ input: child.stdout! })) {
    expect(line).not.toBe('RECEIPT');
    const m = /^BEFORE_INTENT (\S+) (\S+)/.exec(line);
    if (m) {
      found = { approvalId: m[1]!, permitId: m[2]! };
      break;
    }
  }
  child.kill('SIGKILL');
  await exited;
  expect(found).toBeDefined();
  return found!;
}

const counters = async () =>
  (await callMhs(observer, 'mhs__read', { device_id: DEVICE, resource: '_counters' })).body.state as {
    executions: Record<string, number>;
    capability_calls: number;
  };

describe('issue 16: a host killed between taking an approval and journalling its intent', () => {
  it('HOST-041 HOST-047 HOST-070: nothing sent; approval approved_not_executed, permit revoked; a new call needs a new approval', async () => {
    const { approvalId, permitId } = await crashBeforeIntent();
    expect((await counters()).capability_calls).toBe(0);

    rt = await openHostRuntime({ db: host.dbPath });
    // Nothing was journalled, so nothing was sent (HOST-093), and the approval says so.
    const entries = await rt.ledger.range(0);
    expect(entries.filter((e) => e.kind === 'command.intent')).toEqual([]);
    expect((await rt.services.gate.get(approvalId))?.status).toBe('approved_not_executed');
    expect(entries.filter((e) => e.kind === 'approval' && e.event === 'not_executed')).toMatchObject([
      { approval_id: approvalId, code: ErrorCode.HOST_INTERRUPTED },
    ]);
    // Its permit is revoked (HOST-047): recorded, told to the endpoint, none outstanding.
    expect(entries.filter((e) => e.kind === 'permit.revoke')).toMatchObject([
      { permit_id: permitId, approval_id: approvalId, operator: { kind: 'system' }, endpoint_ack: { ok: true } },
    ]);
    expect((await rt.services.permits.get(permitId))?.state).toBe('revoked');
    expect(await rt.services.permits.list()).toEqual([]);
    const bundle = (await callMhs(observer, 'mhs__evidence', { action: 'export' })).body as unknown as EvidenceBundle;
    expect(bundle.entries.filter((e) => e.kind === 'permit.revoke').map((e) => e.body.permit_id)).toEqual([permitId]);

    // The same step again: the stale approval is not used (single use, HOST-070); a new one is asked for.
    await rt.connectEndpoint(host.connectors.lh);
    const asked = new Promise<ApprovalRequest>((resolve) => {
      const off = rt!.services.events.subscribe((e) => {
        if (e.type !== 'approval.requested') return;
        off();
        resolve(e.data.approval as ApprovalRequest);
      });
    });
    const giveUp = new AbortController();
    const again = rt.engine
      .invoke({
        endpointId: host.sims.lh.endpointId,
        deviceId: DEVICE,
        capabilityId: 'cap.liquid.aspirate.v1',
        input: { volume_ul: 10 },
        approvalKey: STEP,
        approvalSignal: giveUp.signal,
      })
      .then(
        () => null,
        (e: { code?: string }) => e.code,
      );
    const fresh = await asked;
    expect(fresh.approval_id).not.toBe(approvalId);
    expect(fresh.status).toBe('pending');
    giveUp.abort();
    expect(await again).toBe(ErrorCode.HOST_APPROVAL_REQUIRED);
    expect((await counters()).capability_calls).toBe(0);
    expect((await rt.ledger.verify()).ok).toBe(true);
  }, 120_000);
});
