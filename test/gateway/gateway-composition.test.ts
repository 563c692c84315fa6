// Guarantees (issue 22 item 1; HOST-084 as an experimental extension): where agents and operators reach the host.
// - `mhs-host mcp --enable-composition` (the MCP gateway, a real child process over stdio) lists one
//   `mhs__composition__<device>` tool per device of an endpoint that advertises `mhs.composition.run`, marked
//   EXPERIMENTAL; a call runs three conveyor steps through the governed path: the endpoint executes exactly three
//   commands, and the ledger holds the tool_call, one intent and the parent plus three child receipts with the
//   composition digest. Without the flag no composition tool is listed.
// - `mhs-host invoke ... mhs.composition.run --enable-composition` prints the disclosure, then the composition
//   receipt on stdout; without the flag it exits 1 with MHS.HOST.COMPOSITION_DISABLED and the simulator's
//   counters do not move (nothing was sent).
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { H } from '../../src/core/index.js';
import { COMPOSITION_CAPABILITY } from '../../src/mhs/composition.js';
import { compositionToolName } from '../../src/engine/tool-composition.js';
import { cli, ledgerEntries, startMhsHost } from '../helpers/mhs-host.js';
import type { MhsHost } from '../helpers/mhs-host.js';
import { callMhs, connectMcpClient } from '../helpers/sim.js';
import { call, gatewayStdio } from './gateway-helpers.js';

vi.setConfig({ hookTimeout: 180_000, testTimeout: 90_000 });

const DEVICE = 'conveyor-workcell';
const TOOL = compositionToolName(DEVICE);
const step = (ticks: number) => ({ device_id: DEVICE, capability_id: 'cap.world.step.v1', input: { ticks } });
const COMPOSITION = { steps: [step(1), step(2), step(3)] };

let host: MhsHost<'belt'>;
let sim: Client;

beforeAll(async () => {
  host = await startMhsHost({ prefix: 'gwc', sims: { belt: ['conveyor', ['--enable-composition']] }, serve: false });
  sim = await connectMcpClient({ mcpUrl: host.sims.belt.mcpUrl });
});

afterAll(async () => {
  await sim?.close();
  await host?.stop();
});

async function executions(): Promise<{ total: number; composition_calls: number }> {
  const r = await callMhs(sim, 'mhs__read', { device_id: DEVICE, resource: '_counters' });
  return (r.body as { state: { total: number; composition_calls: number } }).state;
}

describe('issue 22: composition on the gateway and the CLI (experimental)', () => {
  test('gateway without --enable-composition lists no composition tool', async () => {
    const gw = await gatewayStdio(host.dbPath, '2026-07-28');
    try {
      const names = (await gw.client.listTools()).tools.map((t) => t.name);
      expect(names.some((n) => n.startsWith('mhs__cap__'))).toBe(true);
      expect(names.filter((n) => n.startsWith('mhs__composition'))).toEqual([]);
    } finally {
      await gw.client.close();
    }
  });

  test('gateway with --enable-composition: three steps, one intent, parent and three child receipts', async () => {
    const gw = await gatewayStdio(host.dbPath, '2026-07-28', ['--enable-composition']);
    try {
      const tool = (await gw.client.listTools()).tools.find((t) => t.name === TOOL);
      expect(tool?.description).toMatch(/^EXPERIMENTAL composition/);
      const before = await executions();
      const head = (await ledgerEntries(host.dbPath)).at(-1)!.seq;
      const r = await call(gw.client, TOOL, COMPOSITION);
      expect(r.isError).toBe(false);
      const digest = H(COMPOSITION);
      expect(r.body['receipt']).toMatchObject({
        capability_id: COMPOSITION_CAPABILITY,
        status: 'completed',
        composition_digest: digest,
      });
      const after = await executions();
      expect(after.total - before.total).toBe(3);
      expect(after.composition_calls - before.composition_calls).toBe(1);
      const entries = (await ledgerEntries(host.dbPath)).filter((e) => e.seq > head);
      const commandId = r.body['command_id'] as string;
      expect(entries.filter((e) => e.kind === 'tool_call')).toMatchObject([
        { tool: TOOL, tool_kind: 'composition', command_id: commandId },
      ]);
      expect(entries.filter((e) => e.kind === 'command.intent')).toMatchObject([
        { command_id: commandId, capability_id: COMPOSITION_CAPABILITY, composition_digest: digest },
      ]);
      const receipts = entries.filter((e) => e.kind === 'receipt');
      expect(receipts.map((e) => e.command_id).sort()).toEqual(
        [commandId, `${commandId}.1`, `${commandId}.2`, `${commandId}.3`].sort(),
      );
      for (const e of receipts) expect(e['composition_digest']).toBe(digest);
    } finally {
      await gw.client.close();
    }
  });

  test('CLI invoke: with the flag the disclosure, then the receipt; without it MHS.HOST.COMPOSITION_DISABLED', async () => {
    const args = [
      'invoke',
      host.connectors.belt,
      DEVICE,
      COMPOSITION_CAPABILITY,
      '--db',
      host.dbPath,
      '--input',
      JSON.stringify(COMPOSITION),
    ];
    const before = await executions();
    const refused = await cli(args);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('MHS.HOST.COMPOSITION_DISABLED');
    expect(refused.stdout).toBe('');
    expect(await executions()).toEqual(before);

    const ok = await cli([...args, '--enable-composition']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stderr).toContain('MHS.SAFETY.NOT_CERTIFIED');
    const receipt = JSON.parse(ok.stdout) as { capability_id: string; children: unknown[]; composition_digest: string };
    expect(receipt.capability_id).toBe(COMPOSITION_CAPABILITY);
    expect(receipt.children).toHaveLength(3);
    expect(receipt.composition_digest).toBe(H(COMPOSITION));
    expect((await executions()).total - before.total).toBe(3);
  });
});
