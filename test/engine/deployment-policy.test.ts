// Guarantees (HOST-090, host side), against a real simulator process (conveyor: simulated, laser: `--stand-in-hardware`) and a
// real SQLite store through openHostRuntime (what serve and the CLI open), with the policy's `deployment` section:
// - allow_hardware false: a capability call, a read (engine and model tool) and mhs__operations on the hardware
//   laser are refused with MHS.AUTH.HARDWARE_DISABLED before any session opens (none at the endpoint, none in the
//   host ledger), with no command.intent, each recorded as an `approval` `refused` entry (HOST-045);
//   mhs__devices, mhs__safety and the operator's trusted e-stop still work; the simulated conveyor is unaffected;
//   the model's tool calls (dispatchToolCall) and a workflow mhs.invoke node are refused the same way;
// - allow_hardware true: the laser call goes through (dual approval, permit, completed receipt);
// - enabled false: every device access (capability, read, safety, operations) is refused with MHS.AUTH.DISABLED;
//   mhs__devices (host-local discovery) still answers; the operator's e-stop stays available;
// - an unavailable policy refuses (HOST-043);
// - the CLI (`mhs-host invoke --policy FILE`, a real process) refuses a hardware call the same way.
// The simulator is launched without a projection --config, so it would execute what the host sent: every refusal
// here is the host's.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { ErrorCode, HostError } from '../../src/core/index.js';
import { openHostRuntime } from '../../src/engine/host-runtime.js';
import type { HostRuntime } from '../../src/engine/host-runtime.js';
import { devicesResult, operationsResult, readResult, safetyResult } from '../../src/engine/tool-fixed-calls.js';
import { dispatchToolCall } from '../../src/engine/tool-dispatch.js';
import { ToolSurfaceBuilder } from '../../src/engine/tool-surface.js';
import { capabilityToolName } from '../../src/mhs/tool-names.js';
import type { NodeContext } from '../../src/openwop/node-registry.js';
import { mhsInvokeNode } from '../../src/openwop/nodes/mhs-nodes.js';
import { DEFAULT_POLICY } from '../../src/policy/index.js';
import type { ApprovalRequest, DeploymentPolicy, PolicyConfig } from '../../src/policy/index.js';
import { cli, ledgerEntries, startMhsHost } from '../helpers/mhs-host.js';
import type { MhsHost } from '../helpers/mhs-host.js';
import { callMhs, connectMcpClient } from '../helpers/sim.js';

vi.setConfig({ hookTimeout: 120_000, testTimeout: 60_000 });

const TP = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const PULSE = { deviceId: 'laser', capabilityId: 'cap.laser.pulse.v1', input: { energy_mj: 1, pulses: 1 } };
const STEP = { deviceId: 'conveyor-workcell', capabilityId: 'cap.world.step.v1', input: { ticks: 1 } };

let host: MhsHost<'bench'>;
let rt: HostRuntime;
let probe: Client;
let EP = '';
let deployment: DeploymentPolicy | null = { enabled: true, allow_hardware: true };
let laserCommand = '';

async function failure(p: Promise<unknown>): Promise<HostError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(HostError);
  return e as HostError;
}

/** What the endpoint itself saw: sessions opened per device (its evidence) and capability calls received. */
async function endpointView(): Promise<{ sessions: Record<string, number>; capabilityCalls: number }> {
  const bundle = (await callMhs(probe, 'mhs__evidence', { action: 'export' })).body as {
    entries: Array<{ kind: string; body: Record<string, unknown> }>;
  };
  const sessions: Record<string, number> = {};
  for (const e of bundle.entries)
    if (e.kind === 'session.open') sessions[String(e.body.device_id)] = (sessions[String(e.body.device_id)] ?? 0) + 1;
  const counters = await callMhs(probe, 'mhs__read', { device_id: 'conveyor-workcell', resource: '_counters' });
  return { sessions, capabilityCalls: Number((counters.body.state as Record<string, unknown>).capability_calls) };
}

const since = async (seq: number) => (await rt.ledger.range(seq + 1)).filter((e) => e.seq > seq);

beforeAll(async () => {
  host = await startMhsHost({
    prefix: 'hwpol',
    sims: { bench: ['conveyor,laser', ['--operator-tools', '--stand-in-hardware', 'laser']] },
    serve: false,
  });
  EP = host.sims.bench.endpointId;
  probe = await connectMcpClient({ mcpUrl: host.sims.bench.mcpUrl });
  // Read on every decision, like a policy file an operator reloads: each test sets the section it needs.
  const policy = (): PolicyConfig | null =>
    deployment === null ? null : { ...DEFAULT_POLICY, estopAllow: [{ endpoint_id: EP, device_id: '*' }], deployment };
  rt = await openHostRuntime({ db: host.dbPath, policy });
  await rt.connectEndpoint(host.connectors.bench);
});

afterAll(async () => {
  await rt?.close();
  await probe?.close();
  await host?.stop();
});

describe('HOST-090 deployment policy applied by the host', () => {
  it('HOST-090: with allow_hardware true a hardware capability call goes through (dual approval, permit, receipt)', async () => {
    deployment = { enabled: true, allow_hardware: true };
    const off = rt.services.events.subscribe((e) => {
      if (e.type !== 'approval.requested') return;
      const id = (e.data.approval as ApprovalRequest).approval_id;
      void rt.services.gate
        .vote(id, { principal: { kind: 'human', id: 'alice', name: 'alice' }, decision: 'approve' })
        .then(() =>
          rt.services.gate.vote(id, { principal: { kind: 'human', id: 'carol', name: 'carol' }, decision: 'approve' }),
        );
    });
    try {
      const res = await rt.engine.invoke({ endpointId: EP, ...PULSE });
      expect(res.receipt.status).toBe('completed');
      laserCommand = res.commandId;
    } finally {
      off();
    }
    expect((await rt.engine.read(EP, 'laser')).device_id).toBe('laser');
  });

  it('HOST-090: allow_hardware false refuses the hardware capability call, read and operations before any session opens', async () => {
    deployment = { enabled: true, allow_hardware: false };
    const head = (await rt.ledger.head()).seq;
    const before = await endpointView();

    const call = await failure(rt.engine.invoke({ endpointId: EP, ...PULSE, runId: 'run_x', nodeId: 'pulse' }));
    expect(call.code).toBe(ErrorCode.AUTH_HARDWARE_DISABLED);
    expect(call.details).toMatchObject({ reason: 'hardware_disabled', device_id: 'laser', mode: 'hardware' });
    expect((await failure(rt.engine.read(EP, 'laser'))).code).toBe(ErrorCode.AUTH_HARDWARE_DISABLED);
    // The model tool surface's fixed tools go the same way.
    expect((await failure(readResult(rt.engine, { device_id: 'laser' }))).code).toBe(ErrorCode.AUTH_HARDWARE_DISABLED);
    expect((await failure(operationsResult(rt.engine, rt.ledger, laserCommand, TP))).code).toBe(
      ErrorCode.AUTH_HARDWARE_DISABLED,
    );

    // Nothing reached the endpoint: no session opened, no capability call received.
    expect(await endpointView()).toEqual(before);
    const entries = await since(head);
    expect(entries.filter((e) => e.kind === 'command.intent' || String(e.kind).startsWith('session.'))).toEqual([]);
    const refused = entries.filter((e) => e.kind === 'approval' && e.event === 'refused');
    expect(refused.map((e) => e.access)).toEqual(['capability', 'read', 'read', 'operations']);
    expect(refused[0]).toMatchObject({
      endpoint_id: EP,
      device_id: 'laser',
      capability_id: 'cap.laser.pulse.v1',
      run_id: 'run_x',
      node_id: 'pulse',
      decision: 'deny',
      method: 'policy_rule',
      principals: [{ kind: 'system', id: 'policy:deployment' }],
      reason: 'hardware_disabled',
      code: ErrorCode.AUTH_HARDWARE_DISABLED,
    });
    expect(refused[0]!.session_id).toBeUndefined();
  });

  it('HOST-090: discovery, safety status and a simulated device stay available while hardware is refused', async () => {
    deployment = { enabled: true, allow_hardware: false };
    const listed = (await devicesResult(rt.engine)) as { endpoints: Array<{ devices: Array<{ device_id: string }> }> };
    expect(listed.endpoints[0]!.devices.map((d) => d.device_id).sort()).toEqual(['conveyor-workcell', 'laser']);
    expect(await safetyResult(rt.engine, { device_id: 'laser' }, TP)).toMatchObject({ device_id: 'laser' });
    const step = await rt.engine.invoke({ endpointId: EP, ...STEP });
    expect(step.receipt.status).toBe('completed');
    expect(await operationsResult(rt.engine, rt.ledger, step.commandId, TP)).toMatchObject({ reconciled: false });
    expect((await rt.engine.read(EP, 'conveyor-workcell')).device_id).toBe('conveyor-workcell');
  });

  it('HOST-090: the model tool surface and a workflow mhs.invoke node are refused the same way', async () => {
    deployment = { enabled: true, allow_hardware: false };
    const before = await endpointView();
    const surface = new ToolSurfaceBuilder().build(rt.engine.endpoints());
    const deps = { engine: rt.engine, ledger: rt.ledger };
    const call = (name: string, args: Record<string, unknown>) =>
      dispatchToolCall(deps, surface, { id: `call-${name}`, name, arguments: args }, { agentRunId: 'agent-hw' });
    const pulse = await call(capabilityToolName('laser', 'cap.laser.pulse.v1'), PULSE.input);
    expect(pulse).toMatchObject({ isError: true, result: { error: { mhs_code: ErrorCode.AUTH_HARDWARE_DISABLED } } });
    const read = await call('mhs__read', { device_id: 'laser' });
    expect(read).toMatchObject({ isError: true, result: { error: { mhs_code: ErrorCode.AUTH_HARDWARE_DISABLED } } });
    expect((await call('mhs__devices', {})).isError).toBe(false);
    expect((await call('mhs__safety', { device_id: 'laser' })).isError).toBe(false);

    // A workflow node goes through engine.invoke: a minimal node context around the real node module.
    const ctx = {
      runId: 'run_hw',
      node: {
        id: 'pulse',
        type: 'mhs.invoke',
        config: { endpoint: EP, device: 'laser', capability: PULSE.capabilityId, input: PULSE.input },
      },
      activation: 1,
      inputs: {},
      variables: {},
      resumed: false,
      history: [],
      signal: new AbortController().signal,
      traceparent: undefined,
      checkpoint: async <T>(_name: string, value: () => T) => value(),
    } as unknown as NodeContext;
    const node = mhsInvokeNode({ engine: rt.engine, ledger: rt.ledger });
    expect((await failure(Promise.resolve().then(() => node.execute(ctx)))).code).toBe(
      ErrorCode.AUTH_HARDWARE_DISABLED,
    );
    expect(await endpointView()).toEqual(before);
  });

  it('HOST-090: enabled false refuses every device access with MHS.AUTH.DISABLED; mhs__devices still answers', async () => {
    const step = await rt.engine.invoke({ endpointId: EP, ...STEP });
    deployment = { enabled: false, allow_hardware: true };
    const head = (await rt.ledger.head()).seq;
    const before = await endpointView();
    for (const p of [
      rt.engine.invoke({ endpointId: EP, ...STEP }),
      rt.engine.invoke({ endpointId: EP, ...PULSE }),
      rt.engine.read(EP, 'conveyor-workcell'),
      safetyResult(rt.engine, { device_id: 'conveyor-workcell' }, TP),
      operationsResult(rt.engine, rt.ledger, step.commandId, TP),
    ])
      expect((await failure(p)).code).toBe(ErrorCode.AUTH_DISABLED);
    expect(await endpointView()).toEqual(before);
    const entries = await since(head);
    expect(entries.filter((e) => e.kind === 'command.intent')).toEqual([]);
    expect(entries.filter((e) => e.kind === 'approval' && e.event === 'refused').map((e) => e.reason)).toEqual(
      Array(5).fill('deployment_disabled'),
    );
    expect(((await devicesResult(rt.engine)) as { endpoints: unknown[] }).endpoints).toHaveLength(1);
  });

  it('HOST-043 HOST-090: an unavailable policy refuses before any session opens', async () => {
    deployment = null;
    const before = await endpointView();
    const e = await failure(rt.engine.invoke({ endpointId: EP, ...STEP }));
    expect(e.code).toBe(ErrorCode.HOST_POLICY_DENIED);
    expect(e.details.reason).toBe('policy_unavailable');
    expect(await endpointView()).toEqual(before);
  });

  it('HOST-090 HOST-094: the trusted e-stop stays available with hardware refused, and while disabled', async () => {
    const op = { id: 'op-dana', name: 'dana' };
    deployment = { enabled: true, allow_hardware: false };
    expect(await rt.services.safety.estop(EP, 'laser', op)).toMatchObject({ status: 'sent' });
    deployment = { enabled: false, allow_hardware: false };
    expect(await rt.services.safety.estop(EP, 'conveyor-workcell', op)).toMatchObject({ status: 'sent' });
    const stops = (await rt.ledger.range(0)).filter((e) => e.kind === 'estop.request' || e.kind === 'estop.receipt');
    expect(stops.map((e) => `${String(e.kind)} ${String(e.device_id)}`)).toEqual([
      'estop.request laser',
      'estop.receipt laser',
      'estop.request conveyor-workcell',
      'estop.receipt conveyor-workcell',
    ]);
  });
});

describe('HOST-090 on the CLI', () => {
  let cliHost: MhsHost<'laser'>;
  beforeAll(async () => {
    cliHost = await startMhsHost({
      prefix: 'hwpol-cli',
      sims: { laser: ['laser', ['--stand-in-hardware', 'laser']] },
      serve: false,
    });
  });
  afterAll(async () => {
    await cliHost?.stop();
  });

  it('HOST-090: `mhs-host invoke --policy FILE` refuses a hardware call with MHS.AUTH.HARDWARE_DISABLED, nothing sent', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'mhs-hwpol-')), 'policy.json');
    writeFileSync(file, JSON.stringify({ deployment: { enabled: true } }));
    const r = await cli([
      'invoke',
      cliHost.connectors.laser,
      'laser',
      'cap.laser.pulse.v1',
      '--input',
      JSON.stringify(PULSE.input),
      '--db',
      cliHost.dbPath,
      '--policy',
      file,
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(ErrorCode.AUTH_HARDWARE_DISABLED);
    const entries = await ledgerEntries(cliHost.dbPath);
    expect(entries.filter((e) => e.kind === 'command.intent' || e.kind === 'session.open')).toEqual([]);
    expect(entries.find((e) => e.kind === 'approval' && e.event === 'refused')).toMatchObject({
      device_id: 'laser',
      reason: 'hardware_disabled',
    });
    const c = await connectMcpClient({ mcpUrl: cliHost.sims.laser.mcpUrl });
    try {
      const bundle = (await callMhs(c, 'mhs__evidence', { action: 'export' })).body as {
        entries: Array<{ kind: string }>;
      };
      expect(bundle.entries.filter((e) => e.kind === 'session.open')).toEqual([]);
    } finally {
      await c.close();
    }
  });
});
