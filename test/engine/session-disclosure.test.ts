/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies and ledger entries are read loosely */
// Guarantees (issue 22 item 2; HOST-003, 013, 015, 050): before the first call of a session on a device, every
// surface shows MHS.SAFETY.NOT_CERTIFIED, the device's mode and its fidelity gaps — `mhs-host invoke` (stderr: its
// stdout is the receipt alone), `demo`, `run-task` and `agent` (stdout, before the first step's result), the MCP gateway
// (over stdio and over serve's /mcp: the first tool result of the MCP session carries it), and a workflow run
// (a `log.appended` event on the run, read over HTTP) — and the ledger holds exactly one `disclosure.shown` entry
// per session, naming the surface, endpoint, device, mode, gaps and principal, written before the session's first
// command.intent. The expected mode and gaps are read from the endpoint's manifest as recorded at attach.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { capabilityToolName } from '../../src/mhs/tool-names.js';
import type { LedgerEntry } from '../../src/ledger/index.js';
import { cli, ledgerEntries, startMhsHost } from '../helpers/mhs-host.js';
import type { MhsHost } from '../helpers/mhs-host.js';
import { client } from '../server/serve-helpers.js';
import { call, gatewayHttp, gatewayStdio } from '../gateway/gateway-helpers.js';

const DEVICE = 'thermostat';
const SETPOINT = 'cap.thermal.setpoint.v1';
const READ = 'cap.thermal.read.v1';

let host: MhsHost<'thermo'>;
const dir = mkdtempSync(join(tmpdir(), 'mhs-disclosure-'));

beforeAll(async () => {
  host = await startMhsHost({
    prefix: 'disc',
    sims: { thermo: ['thermostat', ['--time-scale', '50']] },
    tokens: { 'disc-client': 'client', 'disc-agent': 'agent', 'disc-op': 'operator' },
  });
}, 180_000);

afterAll(async () => {
  await host?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Mode and gaps of the device as its manifest declares them (the attach-time `disclosure` entry). */
async function declared(): Promise<{ mode: string; gaps: string[] }> {
  const att = (await ledgerEntries(host.dbPath)).find(
    (e) => e.kind === 'disclosure' && e.endpoint_id === host.sims.thermo.endpointId,
  )!;
  const d = (att.devices as Array<Record<string, any>>).find((x) => x.device_id === DEVICE)!;
  return { mode: d.mode as string, gaps: d.fidelity_gaps as string[] };
}

/** The text a surface printed shows the notice, the mode and every gap. */
async function expectShown(text: string): Promise<void> {
  const { mode, gaps } = await declared();
  expect(gaps.length).toBeGreaterThan(0);
  expect(text).toContain('MHS.SAFETY.NOT_CERTIFIED');
  expect(text).toContain(`mode: ${mode.toUpperCase()}`);
  for (const g of gaps) expect(text).toContain(g);
}

/** The `disclosure.shown` entries of one session scope, and the first command.intent of that scope. */
async function session(pred: (e: LedgerEntry) => boolean): Promise<{ shown: LedgerEntry[]; entries: LedgerEntry[] }> {
  const entries = await ledgerEntries(host.dbPath);
  return { shown: entries.filter((e) => e.kind === 'disclosure.shown' && pred(e)), entries };
}

async function expectOneEntryBefore(shown: LedgerEntry[], firstIntent: LedgerEntry | undefined, surface: string) {
  const { mode, gaps } = await declared();
  expect(shown).toHaveLength(1);
  expect(shown[0]).toMatchObject({
    surface,
    endpoint_id: host.sims.thermo.endpointId,
    device_id: DEVICE,
    mode,
    fidelity_gaps: gaps,
    safety_notice: 'MHS.SAFETY.NOT_CERTIFIED',
  });
  expect((shown[0]!.principal as { id?: unknown }).id).toEqual(expect.any(String));
  expect(firstIntent).toBeDefined();
  expect(shown[0]!.seq).toBeLessThan(firstIntent!.seq);
}

describe('disclosure before the first call of a session, on every surface', () => {
  test('HOST-003 HOST-050: mhs-host invoke shows it before sending, and records it once', async () => {
    const r = await cli([
      'invoke',
      host.connectors.thermo,
      DEVICE,
      SETPOINT,
      '--input',
      '{"setpoint_c":30}',
      '--db',
      host.dbPath,
    ]);
    expect(r.code).toBe(0);
    const receipt = JSON.parse(r.stdout) as { command_id: string }; // stdout stays the receipt alone
    await expectShown(r.stderr);
    const { shown, entries } = await session((e) => e.surface === 'cli.invoke');
    const intent = entries.find((e) => e.kind === 'command.intent' && e.command_id === receipt.command_id);
    await expectOneEntryBefore(shown, intent, 'cli.invoke');
  }, 60_000);

  test("HOST-003 HOST-050: the demo (npm start) prints each device's disclosure before its first step", async () => {
    const db = join(dir, 'demo.db');
    const r = await cli(['demo', '--db', db]);
    expect(r.code).toBe(0);
    const entries = await ledgerEntries(db);
    const shown = entries.filter((e) => e.kind === 'disclosure.shown');
    const attached = entries.filter((e) => e.kind === 'disclosure');
    // One per device the task drives, each before that device's first intent, each printed before its first step's result.
    const lines = r.stdout.split('\n');
    expect(shown.length).toBeGreaterThan(0);
    for (const s of shown) {
      expect(s.surface).toBe('cli.demo');
      const dev = (attached.find((a) => a.endpoint_id === s.endpoint_id)!.devices as Array<Record<string, any>>).find(
        (d) => d.device_id === s.device_id,
      )!;
      expect(s).toMatchObject({ mode: dev.mode, fidelity_gaps: dev.fidelity_gaps });
      const intent = entries.find(
        (e) => e.kind === 'command.intent' && e.endpoint_id === s.endpoint_id && e.device_id === s.device_id,
      )!;
      expect(s.seq).toBeLessThan(intent.seq);
      const at = lines.findIndex((l) =>
        l.startsWith(`DISCLOSURE ${s.endpoint_id as string}/${s.device_id as string} `),
      );
      const step = lines.findIndex((l) => new RegExp(`^\\[${s.endpoint_id as string}\\] step \\d+ → `).test(l));
      expect(at).toBeGreaterThanOrEqual(0);
      expect(at).toBeLessThan(step);
    }
    const devices = new Set(
      entries
        .filter((e) => e.kind === 'command.intent')
        .map((e) => `${e.endpoint_id as string}/${e.device_id as string}`),
    );
    expect(shown.map((s) => `${s.endpoint_id as string}/${s.device_id as string}`).sort()).toEqual([...devices].sort());
  }, 120_000);

  test('HOST-003 HOST-015 HOST-050: run-task prints it before the first step, one entry for two steps on the device', async () => {
    const file = join(dir, 'task.json');
    writeFileSync(
      file,
      JSON.stringify({
        steps: [
          { endpoint: host.connectors.thermo, device: DEVICE, capability: SETPOINT, input: { setpoint_c: 31 } },
          { endpoint: host.connectors.thermo, device: DEVICE, capability: READ, input: {} },
        ],
      }),
    );
    const r = await cli(['run-task', file, '--db', host.dbPath]);
    expect(r.code).toBe(0);
    await expectShown(r.stdout);
    const lines = r.stdout.split('\n');
    const at = lines.findIndex((l) => l.includes('MHS.SAFETY.NOT_CERTIFIED'));
    expect(at).toBeGreaterThanOrEqual(0);
    expect(at).toBeLessThan(lines.findIndex((l) => / step 0 → /.test(l)));
    const { shown, entries } = await session((e) => e.surface === 'cli.run-task');
    const intents = entries.filter((e) => e.kind === 'command.intent' && e.task_id === shown[0]?.scope);
    expect(intents).toHaveLength(2);
    await expectOneEntryBefore(shown, intents[0], 'cli.run-task');
  }, 60_000);

  test('HOST-003 HOST-013 HOST-050: agent prints it before the first tool result, one entry for the run', async () => {
    const r = await cli([
      'agent',
      '--script',
      'examples/agent-thermostat.json',
      '--endpoint',
      host.connectors.thermo,
      '--db',
      host.dbPath,
    ]);
    expect(r.code).toBe(0);
    await expectShown(r.stdout);
    const lines = r.stdout.split('\n');
    const at = lines.findIndex((l) => l.includes('MHS.SAFETY.NOT_CERTIFIED'));
    const firstCapResult = lines.findIndex((l) => l.startsWith(`← ${capabilityToolName(DEVICE, SETPOINT)}`));
    expect(at).toBeGreaterThanOrEqual(0);
    expect(at).toBeLessThan(firstCapResult);
    const { shown, entries } = await session((e) => e.surface === 'cli.agent');
    const intents = entries.filter((e) => e.kind === 'command.intent' && e.task_id === shown[0]?.scope);
    expect(intents.length).toBeGreaterThanOrEqual(2);
    await expectOneEntryBefore(shown, intents[0], 'cli.agent');
  }, 60_000);

  test('HOST-003 HOST-013 HOST-015: the gateway (stdio) gives it with the first tool result of the MCP session only', async () => {
    const { client: c } = await gatewayStdio(host.dbPath, '2026-07-28');
    try {
      // Before any call: the server's instructions already disclose the device.
      await expectShown(c.getInstructions() ?? '');
      const tool = capabilityToolName(DEVICE, SETPOINT);
      const first = await call(c, tool, { setpoint_c: 32 });
      const second = await call(c, tool, { setpoint_c: 33 });
      expect(first.isError).toBe(false);
      await expectShown(first.text);
      expect(first.body.disclosure).toMatchObject({ device_id: DEVICE, safety_notice: 'MHS.SAFETY.NOT_CERTIFIED' });
      expect(second.isError).toBe(false);
      expect(second.text).not.toContain('MHS.SAFETY.NOT_CERTIFIED');
      expect(second.body.disclosure).toBeUndefined();
      const scope = (first.body.disclosure as { scope: string }).scope;
      const { shown, entries } = await session((e) => e.surface === 'gateway' && e.scope === scope);
      const intent = entries.find((e) => e.kind === 'command.intent' && e.command_id === first.body.command_id);
      await expectOneEntryBefore(shown, intent, 'gateway');
    } finally {
      await c.close();
    }
  }, 60_000);

  test("HOST-003 HOST-050: the gateway over serve's /mcp records the token's principal", async () => {
    const c = await gatewayHttp(host.srv!.url, host.tokens['disc-agent'], '2026-07-28');
    try {
      const first = await call(c, capabilityToolName(DEVICE, SETPOINT), { setpoint_c: 34 });
      expect(first.isError).toBe(false);
      await expectShown(first.text);
      const scope = (first.body.disclosure as { scope: string }).scope;
      const { shown, entries } = await session((e) => e.surface === 'gateway' && e.scope === scope);
      const intent = entries.find((e) => e.kind === 'command.intent' && e.command_id === first.body.command_id);
      await expectOneEntryBefore(shown, intent, 'gateway');
      expect(shown[0]!.principal).toEqual(intent!.principal);
    } finally {
      await c.close();
    }
  }, 60_000);

  test('HOST-003 HOST-050: a workflow run has the disclosure as an event before its first governed call', async () => {
    const api = client(host.srv!.url, host.tokens['disc-client']!);
    const node = (id: string, setpoint: number) => ({
      id,
      typeId: 'mhs.invoke',
      name: id,
      position: { x: 0, y: 0 },
      config: {
        endpoint: host.sims.thermo.endpointId,
        device: DEVICE,
        capability: SETPOINT,
        input: { setpoint_c: setpoint },
      },
      inputs: {},
    });
    const wf = {
      id: 'disclose-twice',
      name: 'disclose-twice',
      version: '1',
      nodes: [node('a', 35), node('b', 36)],
      edges: [{ id: 'e1', sourceNodeId: 'a', targetNodeId: 'b' }],
      triggers: [{ id: 'manual', type: 'manual' }],
      variables: [],
      metadata: {},
      settings: {},
    };
    expect((await client(host.srv!.url, host.tokens['disc-op']!).post('/v1/workflows', wf)).status).toBe(201);
    const runId = (await api.post('/v1/runs', { workflowId: 'disclose-twice' })).body.runId as string;
    const done = await api.until(runId, (s) => ['completed', 'failed', 'cancelled'].includes(s.status as string));
    expect(done.status).toBe('completed');
    const events = await api.events(runId);
    const disclosed = events.filter((e: any) => e.type === 'log.appended' && e.payload?.fields?.disclosure);
    expect(disclosed).toHaveLength(1);
    await expectShown(String((disclosed[0] as any).payload.message));
    expect((disclosed[0] as any).nodeId).toBe('a');
    const aDone = events.find((e: any) => e.type === 'node.completed' && e.nodeId === 'a')!;
    expect(disclosed[0]!.sequence).toBeLessThan(aDone.sequence);
    const { shown, entries } = await session((e) => e.surface === 'workflow' && e.run_id === runId);
    const intent = entries.find((e) => e.kind === 'command.intent' && e.run_id === runId);
    await expectOneEntryBefore(shown, intent, 'workflow');
  }, 60_000);
});
