// Guarantees (issue 15): `mhs-host agent --model openai-compatible:<model> --base-url http://127.0.0.1:PORT/v1
// --prompt ...` in a real process drives the demo thermostat through the governed path with a model served by a
// local Chat Completions server (no network): it prints each turn, the tool call and its full receipt, and the final
// answer, exits 0, and the key it was given is sent to the server only (not printed, not in the store file); a 401
// exits 1 with MHS.HOST.MODEL_AUTH; `agent` with neither --script nor --model exits 1 with MHS.HOST.MODEL_CONFIG.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { RealClock } from '../../src/core/index.js';
import { openDb, openLedger } from '../../src/ledger/index.js';
import { openConnectorStore } from '../../src/policy/connector-store.js';
import { createEnablement } from '../../src/policy/enablement.js';
import { cli } from '../helpers/mhs-host.js';
import { oaError, oaStream } from '../helpers/openai-fixtures.js';
import { simStdioCommand } from '../helpers/sim.js';
import { startWireServer } from '../helpers/wire-server.js';
import type { WireServer } from '../helpers/wire-server.js';

const SETPOINT = 'mhs__cap__thermostat__cap_thermal_setpoint_v1';
const KEY = 'sk-cli-test-0a1b2c3d4e5f60718293a4b5c6d7e8f9';
const dir = mkdtempSync(join(tmpdir(), 'mhs-agent-model-cli-'));
const db = join(dir, 'host.db');
let srv: WireServer;

/** Registers the demo's `mhs-demo-thermostat` connector and enables it as an operator. */
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

beforeAll(async () => {
  await enableThermostat();
  srv = await startWireServer();
});
afterAll(async () => {
  await srv?.close();
  rmSync(dir, { recursive: true, force: true });
});

const args = (extra: string[] = []) => [
  'agent',
  '--model',
  'openai-compatible:llama3.1',
  '--base-url',
  `${srv.url}/v1`,
  '--prompt',
  'Bring the chamber to 37 degC.',
  '--endpoint',
  'mhs-demo-thermostat',
  '--db',
  db,
  '--model-retries',
  '0',
  ...extra,
];

describe('mhs-host agent --model', () => {
  test('a real process runs the model over the thermostat and prints turns, the receipt and the answer', async () => {
    srv.requests.length = 0;
    srv.reply(
      oaStream({
        model: 'llama3.1',
        calls: [{ id: 'call_1', name: SETPOINT, argPieces: ['{"setpoint_c":', '37}'] }],
        usage: [700, 20],
      }),
      oaStream({ model: 'llama3.1', pieces: ['Chamber at 37 degC.'], usage: [1400, 8] }),
    );
    const run = await cli(args(), { OPENAI_API_KEY: KEY });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toBe('model openai-compatible:llama3.1');
    expect(lines).toContain('  model: 1 tool call(s), 700 in / 20 out tokens');
    expect(lines).toContain(`→ ${SETPOINT} {"setpoint_c":37}`);
    const printed = JSON.parse(lines[lines.findIndex((l) => l.startsWith(`← ${SETPOINT}`)) + 1]!) as {
      receipt: Record<string, unknown>;
    };
    expect(printed.receipt).toMatchObject({ status: 'completed' });
    expect(lines).toContain('final: Chamber at 37 degC.');
    expect(lines.at(-1)).toMatch(
      /^agent run run_\S+: final after 2 turns, 1 tool calls \(0 errors\), 2100 in \/ 28 out tokens/,
    );

    expect(srv.requests).toHaveLength(2);
    expect(srv.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(srv.requests[0]!.body.messages[1]).toEqual({ role: 'user', content: 'Bring the chamber to 37 degC.' });
    expect(JSON.parse(srv.requests[1]!.body.messages.at(-1).content as string)).toEqual(printed);
    expect(run.stdout).not.toContain(KEY);
    for (const f of readdirSync(dir).filter((n) => n.startsWith('host.db')))
      expect(readFileSync(join(dir, f)).includes(KEY)).toBe(false);
  });

  test('a refused key exits 1 with MHS.HOST.MODEL_AUTH and does not print it', async () => {
    srv.reply(
      oaError(401, {
        message: `Incorrect API key provided: ${KEY}`,
        type: 'invalid_request_error',
        code: 'invalid_api_key',
      }),
    );
    const r = await cli(args(), { OPENAI_API_KEY: KEY });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('error MHS.HOST.MODEL_AUTH');
    expect(`${r.stdout}${r.stderr}`).not.toContain(KEY);
  });

  test('neither --script nor --model exits 1 with MHS.HOST.MODEL_CONFIG', async () => {
    const r = await cli(['agent', '--endpoint', 'mhs-demo-thermostat', '--db', db]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('MHS.HOST.MODEL_CONFIG');
  });
});
