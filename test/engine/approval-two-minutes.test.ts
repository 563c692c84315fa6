// Guarantees (issue 16 item 4, acceptance "an approval that waits 2 minutes"; HOST-036, 041), in real time against
// a real HTTP simulator (liquid-handler: R2, human approval, single-use permit) and a real SQLite store through
// openHostRuntime with the host's default session settings (ad-hoc idle time, session TTL): a governed call whose
// approval is decided 120 s after it was asked is sent on its own session, still open at the endpoint when the
// command arrived (no close, no expiry before it, its last renewal reaching past it), the endpoint executes it
// exactly once and no session fault comes back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { openHostRuntime } from '../../src/engine/host-runtime.js';
import type { HostRuntime } from '../../src/engine/host-runtime.js';
import type { EvidenceBundle } from '../../src/mhs/wire-types.js';
import type { ApprovalRequest } from '../../src/policy/index.js';
import { startMhsHost } from '../helpers/mhs-host.js';
import type { MhsHost } from '../helpers/mhs-host.js';
import { callMhs, connectMcpClient } from '../helpers/sim.js';

const WAIT_MS = 120_000;
const DEVICE = 'liquid-handler';
const alice = { kind: 'human' as const, id: 'tok_alice', name: 'alice' };

let host: MhsHost<'lh'>;
let rt: HostRuntime;
let observer: Client;

beforeAll(async () => {
  host = await startMhsHost({
    prefix: 'approval2m',
    sims: { lh: ['liquid-handler', ['--operator-tools']] },
    serve: false,
  });
  rt = await openHostRuntime({ db: host.dbPath }); // the default session idle time and TTL
  await rt.connectEndpoint(host.connectors.lh);
  observer = await connectMcpClient({ mcpUrl: host.sims.lh.mcpUrl });
}, 120_000);

afterAll(async () => {
  await observer?.close();
  await rt?.close();
  await host?.stop();
});

describe('issue 16: an approval that waits 2 minutes', () => {
  it('HOST-036: the command is sent on an open session and executed once', async () => {
    const EP = host.sims.lh.endpointId;
    const head = (await rt.ledger.head()).seq;
    const asked = new Promise<ApprovalRequest>((resolve) => {
      const off = rt.services.events.subscribe((e) => {
        if (e.type !== 'approval.requested') return;
        off();
        resolve(e.data.approval as ApprovalRequest);
      });
    });
    const call = rt.engine.invoke({
      endpointId: EP,
      deviceId: DEVICE,
      capabilityId: 'cap.liquid.aspirate.v1',
      input: { volume_ul: 10 },
    });
    const req = await asked;
    await new Promise((r) => setTimeout(r, WAIT_MS));
    await rt.services.gate.vote(req.approval_id, { principal: alice, decision: 'approve' });
    const res = await call;
    expect(res.receipt.status).toBe('completed');

    // Host side: the intent went on the session the approval was asked on; no endpoint fault came back.
    const entries = (await rt.ledger.range(head + 1)).filter((e) => e.seq > head);
    const intent = entries.find((e) => e.kind === 'command.intent' && e.command_id === res.commandId);
    expect(intent?.session_id).toBe(req.session_id);
    expect(res.receipt.session_id).toBe(intent?.session_id);
    expect(entries.filter((e) => e.kind === 'error')).toEqual([]);

    // Endpoint side: its evidence chain shows the session open when the command arrived.
    const bundle = (await callMhs(observer, 'mhs__evidence', { action: 'export' })).body as unknown as EvidenceBundle;
    const sid = res.receipt.session_id;
    const receipts = bundle.entries.filter((e) => e.kind === 'receipt' && e.body.command_id === res.commandId);
    expect(receipts).toHaveLength(1);
    const at = receipts[0]!;
    const before = bundle.entries.filter((e) => e.seq < at.seq && e.body.session_id === sid);
    expect(before.filter((e) => e.kind === 'session.close' || e.kind === 'session.expired')).toEqual([]);
    const opened = before.find((e) => e.kind === 'session.open');
    expect(opened).toBeDefined();
    // The session had lived past the wait, so it was renewed; its last renewal still covered the command.
    expect(Date.parse(at.ts) - Date.parse(opened!.ts)).toBeGreaterThanOrEqual(WAIT_MS);
    const renewed = before.filter((e) => e.kind === 'session.open' || e.kind === 'session.heartbeat').at(-1);
    expect(Date.parse(String(renewed!.body.expires_at))).toBeGreaterThan(Date.parse(at.ts));

    const counters = await callMhs(observer, 'mhs__read', { device_id: DEVICE, resource: '_counters' });
    expect((counters.body.state as { executions: Record<string, number> }).executions[res.commandId]).toBe(1);
  }, 200_000);
});
