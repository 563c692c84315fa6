// Guarantees (HOST-030, 033, 054): `mhs-host agent --script examples/agent-thermostat.json` drives the bundled
// thermostat simulator (the demo's connector, enabled by an operator) through the runtime with the policy gate,
// prints each tool call with its full result (the receipt JSON), reaches the script's final message and exits 0;
// its tool calls are `tool_call` entries of the store's ledger and its transcript is stored; a malformed script
// exits 1 with MHS.HOST.AGENT_SCRIPT_INVALID before anything connects.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { RealClock } from '../../src/core/index.js';
import { openArtifacts } from '../../src/ledger/artifacts.js';
import { openDb, openLedger } from '../../src/ledger/index.js';
import { openConnectorStore } from '../../src/policy/connector-store.js';
import { createEnablement } from '../../src/policy/enablement.js';
import { cli } from '../helpers/mhs-host.js';
import { simStdioCommand } from '../helpers/sim.js';

const dir = mkdtempSync(join(tmpdir(), 'mhs-agent-cli-'));
const db = join(dir, 'host.db');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Registers the example script's connector (the demo's `mhs-demo-thermostat`) and enables it as an operator. */
async function enableThermostat(): Promise<void> {
  const clock = new RealClock();
  const store = await openDb(db);
  try {
    const ledger = await openLedger(store, { clock });
    const connectors = await openConnectorStore(store, { clock });
    const sim = simStdioCommand('thermostat', ['--endpoint-id', 'mhs://demo/thermostat', '--time-scale', '20']);
    await connectors.upsertDiscovered({
      connector_id: 'mhs-demo-thermostat',
      transport: 'stdio',
      command: [sim.command, ...sim.args],
      endpoint_id: null,
      source: { kind: 'registry', ref: 'test' },
      auth: { scheme: 'local' },
    });
    await createEnablement({ store: connectors, ledger }).enable('mhs-demo-thermostat', { id: 'test-operator' });
    ledger.dispose();
  } finally {
    await store.close();
  }
}

describe('mhs-host agent', () => {
  test('HOST-030/033/054: the example script runs over the thermostat simulator and prints full receipts', async () => {
    await enableThermostat();

    const run = await cli(['agent', '--script', 'examples/agent-thermostat.json', '--db', db]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines).toContain('→ mhs__cap__thermostat__cap_thermal_setpoint_v1 {"setpoint_c":37}');
    const resultLine =
      lines[lines.findIndex((l) => l.startsWith('← mhs__cap__thermostat__cap_thermal_setpoint_v1')) + 1]!;
    const printed = JSON.parse(resultLine) as { command_id: string; receipt: Record<string, unknown> };
    expect(printed.receipt).toMatchObject({ status: 'completed', command_id: printed.command_id });
    expect(printed.receipt).toHaveProperty('state_hash');
    expect(printed.receipt).toHaveProperty('evidence');
    expect(run.stdout).toContain(`final: Chamber at 37 degC (receipt completed, command ${printed.command_id})`);
    expect(lines.at(-1)).toMatch(/^agent run run_\S+: final after 4 turns, 5 tool calls \(0 errors\)/);

    const store = await openDb(db);
    try {
      const clock = new RealClock();
      const entries = await (await openLedger(store, { clock })).range(0);
      const calls = entries.filter((e) => e.kind === 'tool_call');
      expect(calls.map((e) => e.tool)).toEqual([
        'mhs__devices',
        'mhs__safety',
        'mhs__cap__thermostat__cap_thermal_setpoint_v1',
        'mhs__cap__thermostat__cap_thermal_read_v1',
        'mhs__operations',
      ]);
      expect(calls[2]).toMatchObject({ command_id: printed.command_id, status: 'completed' });
      const transcript = await (await openArtifacts(store, { clock })).transcript();
      expect(transcript.filter((i) => i.kind === 'tool_result')).toHaveLength(5);
    } finally {
      await store.close();
    }
  });

  test('a malformed script exits 1 with MHS.HOST.AGENT_SCRIPT_INVALID', async () => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ turns: [{ tool_calls: [] }] }));
    const r = await cli(['agent', '--script', file, '--db', db, '--endpoint', 'mhs-demo-thermostat']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('MHS.HOST.AGENT_SCRIPT_INVALID');
  });
});
