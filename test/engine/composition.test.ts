// Guarantees (issue 22 item 1; HOST-084 as an experimental extension, HOST-085), against real HTTP simulators
// (liquid-handler: R2, human approval, single-use permits) and a real SQLite store through openHostRuntime:
// - a composition of three capability calls runs through the governed path with ONE approval over the composition
//   digest and ONE permit; the ledger holds its intent (with the composition digest), the parent receipt and the
//   three child receipts, each carrying the composition digest, and the ledger verifies;
// - a replay of it (a simulator started with --replay from the endpoint's evidence) is labelled replay and matches;
// - with the host flag off, or on an endpoint that does not advertise the extension, the host refuses it with
//   MHS.HOST.COMPOSITION_DISABLED before anything is sent: the simulator's own counters do not move.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ErrorCode, H } from '../../src/core/index.js';
import { openHostRuntime } from '../../src/engine/host-runtime.js';
import type { HostRuntime } from '../../src/engine/host-runtime.js';
import { derivePlan } from '../../src/engine/replay-plan.js';
import { replayRuntimeOptions, runReplay } from '../../src/engine/replay-run.js';
import type { LedgerEntry } from '../../src/ledger/index.js';
import { COMPOSITION_CAPABILITY, COMPOSITION_TOOL } from '../../src/mhs/composition.js';
import type { EvidenceBundle, Manifest, Receipt } from '../../src/mhs/wire-types.js';
import type { ApprovalRequest } from '../../src/policy/index.js';
import { startMhsHost } from '../helpers/mhs-host.js';
import type { MhsHost } from '../helpers/mhs-host.js';
import { callMhs, connectMcpClient } from '../helpers/sim.js';

vi.setConfig({ hookTimeout: 180_000, testTimeout: 90_000 });

const DEVICE = 'liquid-handler';
const EP = 'mhs://test/composition-lh';
const PLAIN = 'mhs://test/composition-plain';
const COMPOSITION = {
  steps: [
    { device_id: DEVICE, capability_id: 'cap.liquid.aspirate.v1', input: { volume_ul: 40 } },
    { device_id: DEVICE, capability_id: 'cap.liquid.dispense.v1', input: { volume_ul: 25 } },
    { device_id: DEVICE, capability_id: 'cap.liquid.dispense.v1', input: { volume_ul: 15 } },
  ],
};
const alice = { kind: 'human' as const, id: 'tok_alice', name: 'alice' };
const dir = mkdtempSync(join(tmpdir(), 'mhs-composition-'));

let host: MhsHost<'lh' | 'plain'>;
let rt: HostRuntime;
let off: HostRuntime;
let lh: Client;
let plain: Client;

beforeAll(async () => {
  host = await startMhsHost({
    prefix: 'composition',
    sims: {
      lh: ['liquid-handler', ['--operator-tools', '--enable-composition', '--endpoint-id', EP]],
      plain: ['liquid-handler', ['--operator-tools', '--endpoint-id', PLAIN]],
    },
    serve: false,
  });
  rt = await openHostRuntime({ db: host.dbPath, engine: { experimentalComposition: true } });
  await rt.connectEndpoint(host.connectors.lh);
  await rt.connectEndpoint(host.connectors.plain);
  lh = await connectMcpClient({ mcpUrl: host.sims.lh.mcpUrl });
  plain = await connectMcpClient({ mcpUrl: host.sims.plain.mcpUrl });
});

afterAll(async () => {
  await lh?.close();
  await plain?.close();
  await off?.close();
  if (!off) await rt?.close();
  await host?.stop();
});

/** Approves every approval request of `r` as alice; returns the requests seen and a stop function. */
function approveAll(r: HostRuntime): { seen: ApprovalRequest[]; stop: () => void } {
  const seen: ApprovalRequest[] = [];
  const stop = r.services.events.subscribe((e) => {
    if (e.type !== 'approval.requested') return;
    const req = e.data.approval as ApprovalRequest;
    seen.push(req);
    void r.services.gate.vote(req.approval_id, { principal: alice, decision: 'approve' }).catch(() => undefined);
  });
  return { seen, stop };
}

async function counters(c: Client): Promise<{ total: number; composition_calls: number }> {
  const r = await callMhs(c, 'mhs__read', { device_id: DEVICE, resource: '_counters' });
  return (r.body as { state: { total: number; composition_calls: number } }).state;
}

const since = async (r: HostRuntime, seq: number): Promise<LedgerEntry[]> =>
  (await r.ledger.range(seq + 1)).filter((e) => e.seq > seq);

describe('issue 22: composition (experimental mhs.composition.run)', () => {
  let recordedHead = -1;

  it('the simulator advertises the extension as experimental only when started with --enable-composition', async () => {
    const on = (await callMhs(lh, 'mhs__inspect', {})).body as unknown as Manifest;
    expect(on.extensions?.[COMPOSITION_CAPABILITY]).toMatchObject({ status: 'experimental', tool: COMPOSITION_TOOL });
    const descriptor = (await (await fetch(`${host.sims.lh.url}/.well-known/mhs.json`)).json()) as Record<
      string,
      unknown
    >;
    expect(descriptor['extensions']).toMatchObject({ [COMPOSITION_CAPABILITY]: { status: 'experimental' } });
    const none = (await callMhs(plain, 'mhs__inspect', {})).body as unknown as Manifest;
    expect(none.extensions).toBeUndefined();
    expect((await plain.listTools()).tools.map((t) => t.name)).not.toContain(COMPOSITION_TOOL);
  });

  it('three calls: one approval, one permit, parent and three child receipts with the digest; ledger verifies', async () => {
    const head = (await rt.ledger.head()).seq;
    const before = await counters(lh);
    const approvals = approveAll(rt);
    const res = await rt.engine
      .invoke({ endpointId: EP, deviceId: DEVICE, capabilityId: COMPOSITION_CAPABILITY, input: COMPOSITION })
      .finally(approvals.stop);
    await res.recorded;
    const digest = H(COMPOSITION);
    expect(res.receipt).toMatchObject({
      capability_id: COMPOSITION_CAPABILITY,
      status: 'completed',
      input_digest: digest,
      composition_digest: digest,
    });
    // One approval over the whole composition's digest, one permit for it.
    expect(approvals.seen).toHaveLength(1);
    expect(approvals.seen[0]!.input_digest).toBe(digest);
    const entries = await since(rt, head);
    const issued = entries.filter((e) => e.kind === 'permit.issue');
    expect(issued).toHaveLength(1);
    expect(issued[0]!['input_digest'] ?? (issued[0]!['permit'] as { input_digest?: string })?.input_digest).toBe(
      digest,
    );
    expect(entries.filter((e) => e.kind === 'approval' && e['event'] === 'requested')).toHaveLength(1);
    // The intent carries the composition and its digest.
    const intents = entries.filter((e) => e.kind === 'command.intent');
    expect(intents).toHaveLength(1);
    expect(intents[0]).toMatchObject({
      command_id: res.commandId,
      capability_id: COMPOSITION_CAPABILITY,
      input_digest: digest,
      composition_digest: digest,
      input: COMPOSITION,
    });
    // The parent receipt and the three child receipts, each with the composition digest.
    const receipts = entries.filter((e) => e.kind === 'receipt');
    const parent = receipts.filter((e) => e.command_id === res.commandId);
    expect(parent).toHaveLength(1);
    expect(parent[0]).toMatchObject({ composition_digest: digest, status: 'completed' });
    const children = receipts.filter((e) => e['parent_command_id'] === res.commandId);
    expect(children.map((e) => e.command_id)).toEqual([1, 2, 3].map((n) => `${res.commandId}.${n}`));
    for (const [i, c] of children.entries()) {
      const r = c['receipt'] as Receipt & { composition?: { digest: string; index: number } };
      expect(c['composition_digest']).toBe(digest);
      expect(r.composition).toMatchObject({ digest, index: i });
      expect(r.capability_id).toBe(COMPOSITION.steps[i]!.capability_id);
      expect(r.status).toBe('completed');
    }
    // The endpoint executed exactly the three steps.
    const after = await counters(lh);
    expect(after.total - before.total).toBe(3);
    expect(after.composition_calls - before.composition_calls).toBe(1);
    expect((await rt.ledger.verify()).ok).toBe(true);
    recordedHead = (await rt.ledger.head()).seq;
  });

  it('HOST-085: a replay of the composition is labelled replay and matches', async () => {
    expect(recordedHead).toBeGreaterThan(0);
    const entries = (await rt.ledger.range(0)).filter((e) => e.seq <= recordedHead);
    const bundle = (await callMhs(lh, 'mhs__evidence', { action: 'export' })).body as unknown as EvidenceBundle;
    const manifest = (await callMhs(lh, 'mhs__inspect', {})).body;
    const plan = derivePlan(entries, {
      source: { kind: 'ledger', ref: 'composition-test' },
      manifests: (d) => (d === manifest['manifest_digest'] ? manifest : undefined),
      bundles: [bundle],
    });
    const cmds = plan.tasks.flatMap((t) => t.commands);
    expect(cmds.map((c) => c.capability_id)).toEqual([COMPOSITION_CAPABILITY]);
    const file = join(dir, 'bundle.json');
    writeFileSync(file, JSON.stringify(bundle));
    const rep = await startMhsHost({
      prefix: 'composition-replay',
      sims: {
        lh: ['liquid-handler', ['--operator-tools', '--enable-composition', '--replay', file, '--endpoint-id', EP]],
      },
      serve: false,
    });
    const opts = replayRuntimeOptions(plan);
    const rrt = await openHostRuntime({
      db: rep.dbPath,
      ...opts,
      engine: { ...opts.engine, experimentalComposition: true },
    });
    const approvals = approveAll(rrt);
    try {
      const report = await runReplay(rrt, plan, { endpointMap: new Map([[EP, rep.connectors.lh]]) });
      expect(report.divergences).toEqual([]);
      expect(report.result).toBe('match');
      expect(report.label.execution).toBe('replay');
      const replayed = await rrt.ledger.range(0);
      const receipts = replayed.filter((e) => e.kind === 'receipt');
      // Parent and children, every one labelled replay (entry label and the receipt's own mode).
      expect(receipts).toHaveLength(4);
      for (const e of receipts) {
        expect(e['execution']).toBe('replay');
        expect((e['receipt'] as Receipt).mode).toBe('replay');
      }
      expect(replayed.filter((e) => e.kind === 'command.intent')).toMatchObject([
        { capability_id: COMPOSITION_CAPABILITY, execution: 'replay' },
      ]);
    } finally {
      approvals.stop();
      await rrt.close();
      await rep.stop();
    }
  });

  it('endpoint flag off: refused with MHS.HOST.COMPOSITION_DISABLED, nothing sent', async () => {
    const head = (await rt.ledger.head()).seq;
    const before = await counters(plain);
    await expect(
      rt.engine.invoke({
        endpointId: PLAIN,
        deviceId: DEVICE,
        capabilityId: COMPOSITION_CAPABILITY,
        input: COMPOSITION,
      }),
    ).rejects.toMatchObject({
      code: ErrorCode.HOST_COMPOSITION_DISABLED,
      details: { reason: 'endpoint_not_advertised' },
    });
    const after = await counters(plain);
    expect(after).toEqual(before);
    expect(after.composition_calls).toBe(0);
    const entries = await since(rt, head);
    expect(entries.filter((e) => ['command.intent', 'approval', 'permit.issue'].includes(e.kind))).toEqual([]);
  });
  it('host flag off: refused with MHS.HOST.COMPOSITION_DISABLED, nothing sent', async () => {
    // Another runtime on the same store, without the flag (one runtime holds the store's ledger at a time).
    await rt.close();
    off = await openHostRuntime({ db: host.dbPath });
    await off.connectEndpoint(host.connectors.lh);
    const head = (await off.ledger.head()).seq;
    const before = await counters(lh);
    await expect(
      off.engine.invoke({ endpointId: EP, deviceId: DEVICE, capabilityId: COMPOSITION_CAPABILITY, input: COMPOSITION }),
    ).rejects.toMatchObject({ code: ErrorCode.HOST_COMPOSITION_DISABLED, details: { reason: 'host_disabled' } });
    expect(await counters(lh)).toEqual(before);
    const entries = await since(off, head);
    expect(entries.filter((e) => ['command.intent', 'approval', 'permit.issue'].includes(e.kind))).toEqual([]);
  });
});
