// Guarantees (issue 16 item 4; HOST-036, 041, 047, 070), against a real HTTP simulator with its operator route
// (liquid-handler: R2, human approval, single-use permit) and a real SQLite store through openHostRuntime:
// - a session lease is held while its call is in flight: an approval that takes longer than the ad-hoc idle time
//   (300 ms here, decided after 1 s) finds its session still open and the command is sent on it and completes;
// - a call refused after its approval (the device's gate held by another host process, so the intent is refused
//   with MHS.HOST.DEVICE_GATE_CLOSED) leaves no outstanding permit: the permit is revoked and the revoke recorded,
//   and the approval reads `approved_not_executed` (recorded), never `consumed`;
// - a call whose device gate shut while the operator decided is refused before any permit is issued.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ErrorCode, HostError, RealClock } from '../../src/core/index.js';
import { openHostRuntime } from '../../src/engine/host-runtime.js';
import type { HostRuntime } from '../../src/engine/host-runtime.js';
import { openDb, openLedger } from '../../src/ledger/index.js';
import type { ApprovalRequest } from '../../src/policy/index.js';
import { startMhsHost } from '../helpers/mhs-host.js';
import type { MhsHost } from '../helpers/mhs-host.js';

vi.setConfig({ hookTimeout: 120_000, testTimeout: 60_000 });

const DEVICE = 'liquid-handler';
const ASPIRATE = { deviceId: DEVICE, capabilityId: 'cap.liquid.aspirate.v1' };
const alice = { kind: 'human' as const, id: 'tok_alice', name: 'alice' };

let host: MhsHost<'lh'>;
let rt: HostRuntime;
let EP = '';

beforeAll(async () => {
  host = await startMhsHost({
    prefix: 'approved',
    sims: { lh: ['liquid-handler', ['--operator-tools']] },
    serve: false,
  });
  EP = host.sims.lh.endpointId;
  rt = await openHostRuntime({ db: host.dbPath, engine: { adhocIdleMs: 300 } });
  await rt.connectEndpoint(host.connectors.lh);
});

afterAll(async () => {
  await rt?.close();
  await host?.stop();
});

/** Resolves with the next approval request; `decide` runs on it (e.g. votes later). */
function onNextRequest(decide: (r: ApprovalRequest) => Promise<unknown>): Promise<ApprovalRequest> {
  return new Promise((resolve) => {
    const off = rt.services.events.subscribe((e) => {
      if (e.type !== 'approval.requested') return;
      off();
      const r = e.data.approval as ApprovalRequest;
      resolve(r);
      void decide(r).catch(() => undefined);
    });
  });
}

const approve = (id: string) => rt.services.gate.vote(id, { principal: alice, decision: 'approve' });
const since = async (seq: number) => (await rt.ledger.range(seq + 1)).filter((e) => e.seq > seq);

describe('issue 16: sessions and approvals', () => {
  it('HOST-036: an approval that outlasts the idle time is sent on an open session and completes', async () => {
    const head = (await rt.ledger.head()).seq;
    const asked = onNextRequest(async (r) => {
      await new Promise((res) => setTimeout(res, 1_000));
      await approve(r.approval_id);
    });
    const res = await rt.engine.invoke({ endpointId: EP, ...ASPIRATE, input: { volume_ul: 10 } });
    await asked;
    expect(res.receipt.status).toBe('completed');
    const entries = await since(head);
    const intent = entries.find((e) => e.kind === 'command.intent');
    // The session the command went on was not closed before it was sent (and no MHS.SESSION.* fault came back).
    const closedBefore = entries.filter((e) => e.kind === 'session.close' && e.seq < (intent?.seq ?? 0));
    expect(closedBefore.filter((e) => e.session_id === intent?.session_id)).toEqual([]);
    expect(entries.filter((e) => e.kind === 'error' && e.phase === 'endpoint_fault')).toEqual([]);
    // Released after the call: the idle ad-hoc session closes on its own.
    await vi.waitFor(() => expect(rt.engine.endpoint(EP)?.sessionList() ?? []).toEqual([]), { timeout: 5_000 });
  });

  it('HOST-047: a call refused after its approval (intent refused) revokes its permit and records it', async () => {
    const head = (await rt.ledger.head()).seq;
    // Another host process on the same store takes the device's gate while the operator decides.
    const otherDb = await openDb(host.dbPath);
    const other = await openLedger(otherDb, { clock: new RealClock(), owner: 'other-host:1' });
    const asked = onNextRequest(async (r) => {
      await other.appendBatch(
        [
          {
            kind: 'command.intent',
            command_id: 'cmd_other_host',
            endpoint_id: EP,
            device_id: DEVICE,
            capability_id: ASPIRATE.capabilityId,
            effect: 'actuate',
            input_digest: r.input_digest,
          },
        ],
        { claimGates: true },
      );
      await approve(r.approval_id);
    });
    try {
      const err = await rt.engine.invoke({ endpointId: EP, ...ASPIRATE, input: { volume_ul: 11 } }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(HostError);
      expect((err as HostError).code).toBe(ErrorCode.HOST_DEVICE_GATE_CLOSED);
      const req = await asked;
      expect(await rt.services.permits.list()).toEqual([]);
      const entries = await since(head);
      const issued = entries.filter((e) => e.kind === 'permit.issue');
      expect(issued).toHaveLength(1);
      expect(entries.filter((e) => e.kind === 'permit.revoke')).toMatchObject([
        { permit_id: issued[0]!.permit_id, approval_id: req.approval_id, operator: { kind: 'system' } },
      ]);
      expect(entries.filter((e) => e.kind === 'command.intent' && e.command_id !== 'cmd_other_host')).toEqual([]);
      expect((await rt.services.gate.get(req.approval_id))?.status).toBe('approved_not_executed');
      expect(entries.filter((e) => e.kind === 'approval' && e.event === 'not_executed')).toMatchObject([
        { approval_id: req.approval_id, code: ErrorCode.HOST_DEVICE_GATE_CLOSED, permit_id: issued[0]!.permit_id },
      ]);
    } finally {
      await other.append({
        kind: 'reconcile',
        command_id: 'cmd_other_host',
        endpoint_id: EP,
        device_id: DEVICE,
        outcome: 'not_executed',
      });
      await other.releaseLease();
      await otherDb.close();
    }
  });

  it('HOST-047: a call whose device gate shut while the operator decided gets no permit at all', async () => {
    const head = (await rt.ledger.head()).seq;
    const ep = rt.engine.endpoint(EP)!;
    const asked = onNextRequest(async (r) => {
      ep.acquireGate(DEVICE, 'cmd_local_other', Date.now());
      await approve(r.approval_id);
    });
    try {
      await expect(rt.engine.invoke({ endpointId: EP, ...ASPIRATE, input: { volume_ul: 12 } })).rejects.toMatchObject({
        code: ErrorCode.HOST_DEVICE_GATE_CLOSED,
      });
      const req = await asked;
      const entries = await since(head);
      expect(entries.filter((e) => e.kind === 'permit.issue')).toEqual([]);
      expect((await rt.services.gate.get(req.approval_id))?.status).toBe('approved_not_executed');
    } finally {
      ep.releaseGate(DEVICE, 'cmd_local_other');
    }
  });
});
