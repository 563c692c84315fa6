/* eslint-disable @typescript-eslint/no-explicit-any -- JSON-RPC lines are read loosely in assertions */
// Guarantees (issue 14; HOST-030…033, 035, 062, 064, 066…068, 094): `mhs-host mcp` is an MCP server that an
// ordinary MCP client (the official SDK, in a child process over stdio) reaches on both revisions. It lists one
// tool per bound capability of every enabled connector and the seven fixed tools, never an operator or session
// tool, with annotations and the risk class from the binding. An R1 capability call goes through the governed path:
// the full receipt comes back, the endpoint executed the command exactly once (its own counter), and the ledger
// holds the tool_call, the command.intent and the receipt with principal kind agent. A principal, permit id or
// `_mhs` in the arguments changes nothing. Disabling the only connector empties the list and sends list_changed;
// enabling it again sends it too. The trusted e-stop stops an allow-listed device with no approval and records the
// pair; a device not allow-listed is refused and recorded. Bad input gets a clear error and the server keeps serving.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { ErrorCode, H, RealClock } from '../../src/core/index.js';
import { openDb, openLedger } from '../../src/ledger/index.js';
import { openConnectorStore } from '../../src/policy/connector-store.js';
import { createEnablement } from '../../src/policy/enablement.js';
import { capabilityToolName } from '../../src/mhs/tool-names.js';
import { MHS_UNAVAILABLE, TOOL_META_KEY } from '../../src/gateway/index.js';
import type { LedgerEntry } from '../../src/ledger/index.js';
import { ledgerEntries, startMhsHost } from '../helpers/mhs-host.js';
import type { MhsHost } from '../helpers/mhs-host.js';
import type { McpRevision } from '../helpers/sim.js';
import { cliEntry, REPO_ROOT } from '../helpers/cli-entry.js';
import { call, gatewayStdio } from './gateway-helpers.js';

const SETPOINT = capabilityToolName('thermostat', 'cap.thermal.setpoint.v1');
const FIXED = [
  'mhs__devices',
  'mhs__inspect',
  'mhs__read',
  'mhs__safety',
  'mhs__operations',
  'mhs__evidence',
  'mhs__estop',
];

let host: MhsHost<'thermo' | 'belt' | 'laser'>;

beforeAll(async () => {
  host = await startMhsHost({
    prefix: 'gw',
    sims: {
      thermo: ['thermostat', ['--time-scale', '50']],
      belt: ['conveyor'],
      laser: ['laser', ['--stand-in-hardware', 'laser']],
    },
    serve: false,
  });
}, 120_000);

afterAll(async () => {
  await host?.stop();
});

/**
 * Enables or disables every connector as recorded operator actions, from this test process: another process than
 * the gateway, like an operator's `mhs-host endpoints enable|disable` (test/mhs/endpoints-cli.test.ts covers that command).
 */
async function setEnabled(on: boolean): Promise<void> {
  const db = await openDb(host.dbPath);
  try {
    const ledger = await openLedger(db, { clock: new RealClock() });
    const enablement = createEnablement({ store: await openConnectorStore(db, { clock: new RealClock() }), ledger });
    for (const id of Object.values(host.connectors))
      await (on
        ? enablement.enable(id, { id: 'alice', via: 'test' })
        : enablement.disable(id, { id: 'alice', via: 'test' }));
  } finally {
    await db.close();
  }
}

const byCommand = (entries: LedgerEntry[], commandId: string) =>
  entries.filter((e) => e.command_id === commandId).map((e) => e.kind);

describe.each<McpRevision>(['legacy', '2026-07-28'])('mhs-host mcp over stdio (%s)', (revision) => {
  let client: Client;
  let stderr: () => string;

  beforeAll(async () => {
    ({ client, stderr } = await gatewayStdio(host.dbPath, revision));
  }, 60_000);
  afterAll(async () => {
    await client?.close();
  });

  test('HOST-062, HOST-031, HOST-032, HOST-064: lists the capability tools and the seven fixed tools, never an operator or session tool', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (const f of FIXED) expect(names).toContain(f);
    expect(names).toContain(SETPOINT);
    expect(names.filter((n) => /permit|reset|session/.test(n))).toEqual([]);
    const setpoint = tools.find((t) => t.name === SETPOINT)!;
    expect(setpoint.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(setpoint._meta?.[TOOL_META_KEY]).toMatchObject({ risk_class: 'R1', device_id: 'thermostat' });
    expect(JSON.stringify(setpoint.inputSchema)).not.toContain('_mhs');
    expect(tools.find((t) => t.name === 'mhs__read')!.annotations).toMatchObject({ readOnlyHint: true });
    // HOST-064: the server's instructions carry the endpoint, its devices and the safety statement.
    const instructions = client.getInstructions() ?? '';
    expect(instructions).toContain(host.sims.thermo.endpointId);
    expect(instructions).toMatch(/Device thermostat \([^)]*\)\n {4}mode: SIMULATED/);
    expect(instructions).toMatch(/not a safety channel/i);
  });

  test('HOST-020, HOST-033, HOST-035: an R1 capability call is governed: full receipt, executed once, tool_call + intent + receipt as agent', async () => {
    const input = { setpoint_c: revision === 'legacy' ? 31 : 32 };
    const r = await call(client, SETPOINT, {
      ...input,
      // Control fields, a permit and a principal in the arguments are the model's, never the host's.
      _mhs: { session_id: 'ses_forged', command_id: 'cmd_forged', permit_id: 'prm_forged' },
    });
    expect(r.isError).toBe(false);
    expect(r.body.outcome).toBe('final');
    const receipt = r.body.receipt;
    expect(receipt.status).toBe('completed');
    expect(receipt).toHaveProperty('state_hash');
    expect(receipt).toHaveProperty('evidence');
    const commandId = String(r.body.command_id);
    expect(commandId).toMatch(/^cmd_/);
    expect(commandId).not.toBe('cmd_forged');
    expect(receipt.command_id).toBe(commandId);

    const counters = await call(client, 'mhs__read', { device_id: 'thermostat', resource: '_counters' });
    expect(counters.body.state.executions[commandId]).toBe(1);

    const entries = await ledgerEntries(host.dbPath);
    expect(byCommand(entries, commandId)).toEqual(expect.arrayContaining(['command.intent', 'receipt', 'tool_call']));
    const toolCall = entries.find((e) => e.kind === 'tool_call' && e.command_id === commandId)!;
    expect(toolCall.principal).toEqual({ kind: 'agent', id: 'local', name: 'local' });
    expect(toolCall.input_digest).toBe(H(input));
    expect(toolCall.control_stripped).toEqual(['command_id', 'permit_id', 'session_id']);
    const intent = entries.find((e) => e.kind === 'command.intent' && e.command_id === commandId)!;
    expect(intent.principal).toMatchObject({ kind: 'agent', id: 'local' });
    expect(intent.input).toEqual(input);
    expect(intent.permit_id).toBeUndefined();
  });

  test('HOST-090: a hardware-mode device is refused before a session opens (HOST-090, no allow_hardware)', async () => {
    const before = await ledgerEntries(host.dbPath);
    const r = await call(client, capabilityToolName('laser', 'cap.laser.pulse.v1'), { energy_mj: 1, pulses: 1 });
    expect(r.isError).toBe(true);
    expect(r.body.error.mhs_code).toBe(ErrorCode.AUTH_HARDWARE_DISABLED);
    const read = await call(client, 'mhs__read', { device_id: 'laser' });
    expect(read.body.error.mhs_code).toBe(ErrorCode.AUTH_HARDWARE_DISABLED);
    const added = (await ledgerEntries(host.dbPath)).slice(before.length);
    expect(added.filter((e) => e.kind === 'command.intent' || String(e.kind).startsWith('session.'))).toEqual([]);
    // Discovery and safety status stay available.
    expect((await call(client, 'mhs__safety', { device_id: 'laser' })).isError).toBe(false);
  });

  test('HOST-035, HOST-042: a principal in the arguments is refused by the schema and nothing is sent', async () => {
    const before = (await ledgerEntries(host.dbPath)).filter((e) => e.kind === 'command.intent').length;
    const r = await call(client, SETPOINT, { setpoint_c: 30, principal: { kind: 'human', id: 'alice' } });
    expect(r.isError).toBe(true);
    expect(r.body.error.mhs_code).toBe(ErrorCode.SCHEMA_INVALID_INPUT);
    const after = (await ledgerEntries(host.dbPath)).filter((e) => e.kind === 'command.intent').length;
    expect(after).toBe(before);
  });

  test('HOST-063: bad input: unknown tool, schema failure, oversize frame; the server keeps serving', async () => {
    await expect(client.callTool({ name: 'mhs__permit', arguments: {} })).rejects.toThrow(/Unknown tool/);
    const bad = await call(client, SETPOINT, { setpoint_c: 'hot' });
    expect(bad.isError).toBe(true);
    expect(bad.body.error.mhs_code).toBe(ErrorCode.SCHEMA_INVALID_INPUT);
    const range = await call(client, SETPOINT, { setpoint_c: 500 });
    expect(range.isError).toBe(true);
    await expect(
      client.callTool({ name: SETPOINT, arguments: { setpoint_c: 30, pad: 'x'.repeat(4 * 1024 * 1024 + 16) } }),
    ).rejects.toThrow(/frame limit/);
    const ok = await call(client, 'mhs__devices', {});
    expect(ok.isError).toBe(false);
    expect(JSON.stringify(ok.body)).toContain('thermostat');
    expect(stderr()).toMatch(/frame/);
  });
});

describe.each<McpRevision>(['legacy', '2026-07-28'])('enablement over stdio (%s)', (revision) => {
  let client: Client;

  beforeAll(async () => {
    ({ client } = await gatewayStdio(host.dbPath, revision));
  }, 60_000);
  afterAll(async () => {
    await client?.close();
  });

  test('HOST-066, HOST-068, HOST-069: disabling the connectors empties the tool list with list_changed; enabling brings it back', async () => {
    let changed = 0;
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      changed += 1;
    });
    // The 2026-07-28 revision delivers change notifications on a subscriptions/listen stream only.
    const sub = revision === 'legacy' ? undefined : await client.listen({ toolsListChanged: true });
    expect((await client.listTools()).tools.map((t) => t.name)).toContain(SETPOINT);
    await setEnabled(false);
    await expect.poll(() => changed, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    expect((await client.listTools()).tools).toEqual([]);
    await expect(client.callTool({ name: SETPOINT, arguments: { setpoint_c: 30 } })).rejects.toThrow(/Unknown tool/);
    const seen = changed;
    await setEnabled(true);
    await expect.poll(() => changed, { timeout: 10_000 }).toBeGreaterThan(seen);
    await expect.poll(async () => (await client.listTools()).tools.map((t) => t.name)).toContain(SETPOINT);
    await sub?.close();
  });

  test('HOST-068: while nothing is enabled the instructions say MHS is not available', async () => {
    await setEnabled(false);
    try {
      const fresh = await gatewayStdio(host.dbPath, revision);
      expect(fresh.client.getInstructions()).toBe(MHS_UNAVAILABLE);
      expect((await fresh.client.listTools()).tools).toEqual([]);
      await fresh.client.close();
    } finally {
      await setEnabled(true);
    }
  });
});

describe('malformed JSON-RPC on the wire', () => {
  test('a non-JSON line is skipped, JSON that is not JSON-RPC gets Invalid Request, and the server keeps serving', async () => {
    const entry = cliEntry();
    const child = spawn(entry.command, [...entry.args, 'mcp', '--db', host.dbPath], {
      cwd: REPO_ROOT,
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    const lines = () =>
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, any>);
    try {
      child.stdin!.write('this is not json\n{"foo": 1}\n');
      child.stdin!.write(
        `${JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } })}\n`,
      );
      await expect.poll(() => lines().length, { timeout: 30_000 }).toBeGreaterThanOrEqual(2);
      expect(lines()[0]).toMatchObject({ id: null, error: { code: -32600 } });
      expect(lines()[1]).toMatchObject({ id: 7, result: { serverInfo: { name: 'mhs-host-gateway' } } });
    } finally {
      child.kill();
    }
  });
});

describe('the trusted e-stop through the gateway (HOST-094)', () => {
  let client: Client;

  beforeAll(async () => {
    const policy = join(mkdtempSync(join(tmpdir(), 'gw-policy-')), 'policy.json');
    writeFileSync(
      policy,
      JSON.stringify({ estopAllow: [{ endpoint_id: host.sims.belt.endpointId, device_id: 'conveyor-workcell' }] }),
    );
    ({ client } = await gatewayStdio(host.dbPath, '2026-07-28', ['--policy', policy]));
  }, 60_000);
  afterAll(async () => {
    await client?.close();
  });

  test('HOST-094, HOST-032: stops an allow-listed device with no approval and records the request/receipt pair', async () => {
    const r = await call(client, 'mhs__estop', { device_id: 'conveyor-workcell' });
    expect(r.isError).toBe(false);
    expect(r.body.status).toBe('sent');
    const safety = await call(client, 'mhs__safety', { device_id: 'conveyor-workcell' });
    expect(safety.body.estop.engaged).toBe(true);
    // The host's policy refuses every later command on the stopped device before anything is sent.
    const step = await call(client, capabilityToolName('conveyor-workcell', 'cap.world.step.v1'), { ticks: 1 });
    expect(step.isError).toBe(true);
    expect(step.body.error.mhs_code).toBe(ErrorCode.SAFETY_ESTOP_ACTIVE);
    const entries = await ledgerEntries(host.dbPath);
    const pair = entries.filter(
      (e) => (e.kind === 'estop.request' || e.kind === 'estop.receipt') && e.device_id === 'conveyor-workcell',
    );
    expect(pair.map((e) => e.kind)).toEqual(['estop.request', 'estop.receipt']);
    expect(pair[0]!.operator).toMatchObject({ kind: 'agent', id: 'local' });
    // No approval was asked for the stop: the only approval entry of the device is the later refused step.
    const approvals = entries.filter((e) => e.kind === 'approval' && e.device_id === 'conveyor-workcell');
    expect(approvals.map((e) => e.event)).toEqual(['refused']);
    expect(approvals[0]!.seq).toBeGreaterThan(pair[1]!.seq);
  });

  test('HOST-094: a device not on the allow-list is refused, recorded, and nothing is stopped', async () => {
    const r = await call(client, 'mhs__estop', { device_id: 'thermostat' });
    expect(r.isError).toBe(true);
    expect(r.body.error.mhs_code).toBe(ErrorCode.HOST_POLICY_DENIED);
    const safety = await call(client, 'mhs__safety', { device_id: 'thermostat' });
    expect(safety.body.estop.engaged).toBe(false);
    const refused = (await ledgerEntries(host.dbPath)).filter(
      (e) => e.kind === 'tool_call' && e.tool === 'mhs__estop' && e.is_error === true,
    );
    expect(refused.at(-1)).toMatchObject({ error: { mhs_code: ErrorCode.HOST_POLICY_DENIED } });
    expect(refused.at(-1)!.principal).toMatchObject({ kind: 'agent' });
  });
});
