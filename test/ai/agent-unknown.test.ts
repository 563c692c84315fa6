// Guarantees (HOST-037, 072, 091): when the reply to a model's capability call is lost after it executed (real
// simulator with --drop-reply), the model gets MHS.OUTCOME.UNKNOWN with the command_id and a remediation to
// observe (never "ok", never a retryable infrastructure error), the `tool_call` entry names that command; the
// model's `mhs__operations` on it goes through the engine's reconciliation and returns the retained receipt
// (replayed, executed once), and the command is no longer unsettled.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ErrorCode, RealClock } from '../../src/core/index.js';
import { parseAgentScript } from '../../src/ai/agent-script.js';
import { runAgent } from '../../src/ai/agent-loop.js';
import type { AgentResult } from '../../src/ai/agent-loop.js';
import { ScriptedProvider } from '../../src/ai/scripted-provider.js';
import type { Engine } from '../../src/engine/index.js';
import { capabilityToolName } from '../../src/mhs/tool-names.js';
import { connectStdio, executions, openStore, startEngine } from '../engine/harness.js';
import type { Store } from '../engine/harness.js';

const THERMO = 'mhs://test/agent-unknown';
const READCAP = capabilityToolName('thermostat', 'cap.thermal.read.v1');
let store: Store;
let engine: Engine;
let run: AgentResult;

beforeAll(async () => {
  store = await openStore();
  engine = await startEngine(store, { transportMarginMs: 300 });
  await engine.attach(
    await connectStdio('thermostat', ['--endpoint-id', THERMO, '--drop-reply', '1'], 'mhs-agent-unknown'),
  );
  run = await runAgent({
    provider: new ScriptedProvider(
      parseAgentScript({
        turns: [
          { tool_calls: [{ tool: READCAP, arguments: {} }] },
          {
            tool_calls: [
              { tool: 'mhs__operations', arguments: { command_id: { $ref: 'result[0].error.details.command_id' } } },
            ],
          },
          { final: '{{result[1].outcome}}' },
        ],
      }),
    ),
    engine,
    ledger: store.ledger,
    clock: new RealClock(),
  });
});
afterAll(async () => {
  await engine?.stop();
  await store?.close();
});

describe('unknown outcome seen by the model', () => {
  test('HOST-037/072: a lost reply reaches the model as MHS.OUTCOME.UNKNOWN with command_id and remediation', async () => {
    const lost = run.calls[0]!;
    expect(lost.isError).toBe(true);
    const err = lost.result.error as { mhs_code: string; remediation: string; details: { command_id: string } };
    expect(err.mhs_code).toBe(ErrorCode.OUTCOME_UNKNOWN);
    expect(err.remediation).not.toBe('');
    expect(err.details.command_id).toBe(lost.commandId);
    const entry = (await store.ledger.byCommand(lost.commandId!)).find((e) => e.kind === 'tool_call')!;
    expect(entry).toMatchObject({ outcome: 'error', error: { mhs_code: ErrorCode.OUTCOME_UNKNOWN } });
  });

  test('HOST-091: observing it with mhs__operations reconciles it; it executed once', async () => {
    const lost = run.calls[0]!;
    const obs = run.calls[1]!;
    expect(obs.isError).toBe(false);
    expect(obs.result).toMatchObject({
      command_id: lost.commandId,
      reconciled: true,
      outcome: 'receipt',
      receipt: { command_id: lost.commandId, status: 'completed' },
    });
    expect(run.final).toBe('receipt');
    expect(engine.pending().map((p) => p.commandId)).not.toContain(lost.commandId);
    expect(await executions(engine, THERMO, 'thermostat', lost.commandId!)).toBe(1);
  });
});
