// Guarantees (HOST-030, 033, 034, 054, 056, 062, 072): the scripted agent, driven over two real simulator
// processes with a real SQLite store, gets the full receipt of every capability call (the same receipt the ledger
// holds), each call writes one `tool_call` entry linked to its command by command_id and to the run's trace; a
// model-supplied `_mhs` is stripped (the host's control fields are sent); refused and failed calls come back with
// the full error (mhs_code, remediation); an endpoint refusal is a receipt, not an error; the transcript holds the
// calls and results (redacted per the manifest) and is exported in the evidence package; the run's sessions are
// closed when it ends; a script reference to a missing result stops the run with MHS.HOST.AGENT_SCRIPT_INVALID.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ErrorCode, H, RealClock } from '../../src/core/index.js';
import { parseAgentScript } from '../../src/ai/agent-script.js';
import { runAgent } from '../../src/ai/agent-loop.js';
import type { AgentResult } from '../../src/ai/agent-loop.js';
import { ScriptedProvider } from '../../src/ai/scripted-provider.js';
import type { Engine } from '../../src/engine/index.js';
import { traceIdOf } from '../../src/engine/tracing.js';
import { openArtifacts } from '../../src/ledger/artifacts.js';
import type { Artifacts } from '../../src/ledger/artifacts.js';
import { exportPackage, verifyPackage } from '../../src/ledger/index.js';
import type { LedgerEntry } from '../../src/ledger/index.js';
import { REDACTED } from '../../src/ledger/redaction.js';
import { capabilityToolName } from '../../src/mhs/tool-names.js';
import { connectStdio, openStore, startEngine } from '../engine/harness.js';
import type { Store } from '../engine/harness.js';

const THERMO = 'mhs://test/agent-thermostat';
const BELT = 'mhs://test/agent-conveyor';
const SETPOINT = capabilityToolName('thermostat', 'cap.thermal.setpoint.v1');
const READCAP = capabilityToolName('thermostat', 'cap.thermal.read.v1');
const STEP = capabilityToolName('conveyor-workcell', 'cap.world.step.v1');
const clock = new RealClock();

const SCRIPT = {
  name: 'agent test',
  prompt: 'Bring the chamber to 37 degC and report its state hash.',
  turns: [
    { tool_calls: [{ tool: 'mhs__devices', arguments: {} }] },
    {
      text: 'Setting the chamber.',
      tool_calls: [
        {
          tool: SETPOINT,
          arguments: {
            setpoint_c: 37,
            operator_note: 'call Bob at home',
            _mhs: { session_id: 'ses_forged', command_id: 'cmd_forged', deadline_ms: 1, permit_id: 'prm_forged' },
          },
        },
      ],
    },
    {
      tool_calls: [
        { tool: SETPOINT, arguments: { setpoint_c: 500 } },
        { tool: 'mhs__read', arguments: { device_id: 'thermostat' } },
      ],
    },
    {
      tool_calls: [
        { tool: READCAP, arguments: {} },
        { tool: 'mhs__operations', arguments: { command_id: { $ref: 'result[1].command_id' } } },
      ],
    },
    {
      tool_calls: [
        { tool: 'mhs__permit', arguments: {} },
        { tool: 'mhs__safety', arguments: { device_id: 'thermostat' } },
        { tool: STEP, arguments: { ticks: 2 } },
      ],
    },
    { final: 'set to {{result[1].receipt.output.setpoint_c}} degC, state {{result[1].receipt.state_hash}}' },
  ],
};

let store: Store;
let artifacts: Artifacts;
let engine: Engine;
let run: AgentResult;
let entries: LedgerEntry[];
let outDir: string;

beforeAll(async () => {
  store = await openStore();
  artifacts = await openArtifacts(store.db, { clock });
  engine = await startEngine(store, { artifacts });
  const conns = await Promise.all([
    connectStdio('thermostat', ['--endpoint-id', THERMO, '--time-scale', '20'], 'mhs-agent-thermo'),
    connectStdio(
      'conveyor',
      ['--endpoint-id', BELT, '--interlock', 'conveyor-workcell:guard_door=open'],
      'mhs-agent-belt',
    ),
  ]);
  for (const c of conns) await engine.attach(c);
  const script = parseAgentScript(SCRIPT);
  run = await runAgent({
    provider: new ScriptedProvider(script),
    engine,
    ledger: store.ledger,
    transcript: artifacts,
    clock,
    prompt: script.prompt!,
  });
  entries = await store.ledger.range(0);
  outDir = join(mkdtempSync(join(tmpdir(), 'mhs-agent-out-')), 'pkg');
});
afterAll(async () => {
  await engine?.stop();
  await store?.close();
  if (outDir) rmSync(join(outDir, '..'), { recursive: true, force: true });
});

const toolCalls = () => entries.filter((e) => e.kind === 'tool_call');

describe('scripted agent over real simulators', () => {
  test('HOST-033: each capability call returns the FULL receipt, the one in the ledger, linked by command_id', async () => {
    expect(run.stopReason).toBe('final');
    expect(run.turns).toBe(6);
    expect(run.calls.map((c) => c.tool)).toEqual([
      'mhs__devices',
      SETPOINT,
      SETPOINT,
      'mhs__read',
      READCAP,
      'mhs__operations',
      'mhs__permit',
      'mhs__safety',
      STEP,
    ]);
    const set = run.calls[1]!;
    expect(set.isError).toBe(false);
    const receipt = set.result.receipt as Record<string, unknown>;
    expect(receipt).toMatchObject({ status: 'completed', device_id: 'thermostat', command_id: set.commandId });
    expect(Object.keys(receipt)).toEqual(
      expect.arrayContaining(['revisions', 'state_hash', 'effects', 'output', 'error', 'evidence', 'replayed']),
    );
    expect(run.final).toBe(`set to 37 degC, state ${receipt.state_hash as string}`);

    const byCmd = await store.ledger.byCommand(set.commandId!);
    expect(byCmd.map((e) => e.kind)).toEqual(expect.arrayContaining(['command.intent', 'receipt', 'tool_call']));
    const intent = byCmd.find((e) => e.kind === 'command.intent')!;
    const recorded = byCmd.filter((e) => e.kind === 'receipt').at(-1)!;
    expect(recorded.receipt).toEqual(receipt);
    const tc = byCmd.find((e) => e.kind === 'tool_call')!;
    expect(tc).toMatchObject({
      tool: SETPOINT,
      agent_run_id: run.runId,
      endpoint_id: THERMO,
      capability_id: 'cap.thermal.setpoint.v1',
      outcome: 'final',
      status: 'completed',
      receipt_digest: H(receipt),
      input_digest: intent.input_digest,
      intent_seq: intent.seq,
      receipt_seq: recorded.seq,
      seq: set.ledgerSeq,
    });
    // HOST-035: the call and its intent are made for an agent principal the host names.
    expect(tc.principal).toMatchObject({ kind: 'agent', id: run.runId });
    expect(intent.principal).toEqual(tc.principal);
    // One trace: run → tool call → command.
    expect(traceIdOf(tc.traceparent as string)).toBe(traceIdOf(run.traceparent));
    expect(traceIdOf(intent.traceparent as string)).toBe(traceIdOf(run.traceparent));

    expect(run.calls[4]!.result.receipt).toMatchObject({ status: 'completed', output: { temperature_c: 37 } });
    expect(run.calls[5]!.result).toMatchObject({ command_id: set.commandId, receipt: { command_id: set.commandId } });
    // Every call, read or capability, has exactly one tool_call entry.
    expect(toolCalls().map((e) => e.call_id)).toEqual(run.calls.map((c) => c.callId));
    expect(toolCalls().every((e) => e.agent_run_id === run.runId)).toBe(true);
  });

  test('wire §4: the _mhs a model sends is stripped; the host sends its own control fields', async () => {
    const set = run.calls[1]!;
    const intent = (await store.ledger.byCommand(set.commandId!)).find((e) => e.kind === 'command.intent')!;
    expect(set.commandId).not.toBe('cmd_forged');
    expect(intent.session_id).not.toBe('ses_forged');
    expect(intent.deadline_ms).not.toBe(1);
    expect(intent.permit_id).toBeUndefined();
    expect(intent.input).toEqual({ setpoint_c: 37, operator_note: REDACTED });
    expect(await store.ledger.byCommand('cmd_forged')).toEqual([]);
    const tc = toolCalls()[1]!;
    expect(tc.control_stripped).toEqual(['command_id', 'deadline_ms', 'permit_id', 'session_id']);
    expect(tc.input_digest).toBe(H({ setpoint_c: 37, operator_note: 'call Bob at home' }));
  });

  test('HOST-072: a refused call comes back with the full error: mhs_code, remediation, details', () => {
    const bad = run.calls[2]!;
    expect(bad.isError).toBe(true);
    expect(bad.commandId).toBeNull();
    const err = bad.result.error as { mhs_code: string; remediation: string; details: { issues: unknown[] } };
    expect(err.mhs_code).toBe(ErrorCode.SCHEMA_INVALID_INPUT);
    expect(err.remediation).not.toBe('');
    expect(err.details.issues.length).toBeGreaterThan(0);
    expect(toolCalls()[2]).toMatchObject({ outcome: 'error', is_error: true, error: { mhs_code: err.mhs_code } });
    // Nothing was journaled for it.
    expect(entries.filter((e) => e.kind === 'command.intent' && e.tool === SETPOINT)).toHaveLength(1);
  });

  test('HOST-062/072: an operator tool is not offered; an endpoint refusal is a receipt with mhs_code', () => {
    const permit = run.calls[6]!;
    expect(permit.isError).toBe(true);
    expect(permit.result.error).toMatchObject({
      mhs_code: ErrorCode.SCHEMA_INVALID_INPUT,
      details: { reason: 'unknown_tool' },
    });
    const step = run.calls[8]!;
    expect(step.isError).toBe(false);
    const receipt = step.result.receipt as {
      status: string;
      error: { mhs_code: string; remediation: string; details: unknown };
    };
    expect(receipt.status).toBe('rejected');
    // The endpoint's error reaches the model verbatim: code, remediation field and details (which interlock).
    expect(receipt.error).toMatchObject({
      mhs_code: ErrorCode.SAFETY_INTERLOCK_OPEN,
      remediation: expect.any(String),
      details: { interlocks: [{ id: 'guard_door', state: 'open' }] },
    });
    expect(toolCalls()[8]).toMatchObject({ status: 'rejected', command_id: step.commandId });
    expect(run.calls[7]!.result).toMatchObject({ device_id: 'thermostat', notice: 'MHS.SAFETY.NOT_CERTIFIED' });
  });

  test('HOST-054/056: the transcript holds every call and result (redacted) and is exported', async () => {
    const items = await artifacts.transcript({ sessionId: run.runId });
    expect(items.map((i) => (i.kind === 'message' ? `message:${i.role as string}` : i.kind))).toEqual([
      'message:system',
      'message:user',
      'tool_call',
      'tool_result',
      'message:assistant',
      ...run.calls.slice(1).flatMap(() => ['tool_call', 'tool_result']),
      'message:assistant',
    ]);
    // The disclosure the model was shown first names the devices' modes (HOST-013 presentation).
    expect(items[0]!.text).toMatch(/Device thermostat \([^)]*\)\n {4}mode: SIMULATED/);
    const call = items.find((i) => i.kind === 'tool_call' && i.tool === SETPOINT)!;
    expect((call.input as Record<string, unknown>).operator_note).toBe(REDACTED);
    const result = items.find((i) => i.kind === 'tool_result' && i.command_id === run.calls[1]!.commandId)!;
    expect(result.result).toEqual(run.calls[1]!.result);

    const pkg = await exportPackage({ db: store.db, outDir, clock });
    expect(pkg.status).toBe('verified');
    const lines = readFileSync(join(outDir, 'transcript.jsonl'), 'utf8').trim().split('\n');
    expect(lines).toHaveLength(items.length);
    const exported = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(exported.find((i) => i.command_id === run.calls[1]!.commandId && i.kind === 'tool_result')?.result).toEqual(
      run.calls[1]!.result,
    );
    expect(readFileSync(join(outDir, 'transcript.jsonl'), 'utf8')).not.toContain('call Bob');
    // Issue 20: every tool call and result of a real agent run is bound to its tool_call entry (redacted as stored).
    const v = await verifyPackage(outDir);
    expect(v.problems).toEqual([]);
    expect(v.checked.transcript_bound).toBe(items.filter((i) => i.kind !== 'message').length);
    expect(v.checked.transcript_messages).toBe(items.filter((i) => i.kind === 'message').length);
  });

  test('HOST-034: the sessions the run opened are closed when it ends', async () => {
    const sessions = new Set(entries.filter((e) => e.kind === 'command.intent').map((e) => e.session_id as string));
    expect(sessions.size).toBeGreaterThan(0);
    for (const s of sessions) expect((await store.ledger.bySession(s)).map((e) => e.kind)).toContain('session.close');
  });

  test('a reference to a result that does not exist stops the run with MHS.HOST.AGENT_SCRIPT_INVALID', async () => {
    const script = parseAgentScript({
      turns: [
        { tool_calls: [{ tool: 'mhs__read', arguments: { device_id: 'thermostat' } }] },
        { tool_calls: [{ tool: 'mhs__read', arguments: { device_id: { $ref: 'result[5].device_id' } } }] },
      ],
    });
    const err = await runAgent({ provider: new ScriptedProvider(script), engine, ledger: store.ledger }).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: ErrorCode.HOST_AGENT_SCRIPT_INVALID });
  });

  test('the loop stops after max turns when no final message comes', async () => {
    const script = parseAgentScript({
      turns: [1, 2, 3].map(() => ({ tool_calls: [{ tool: 'mhs__read', arguments: { device_id: 'thermostat' } }] })),
    });
    const r = await runAgent({ provider: new ScriptedProvider(script), engine, ledger: store.ledger, maxTurns: 2 });
    expect(r).toMatchObject({ stopReason: 'max_turns', turns: 2, final: null });
    expect(r.calls).toHaveLength(2);
  });
});
