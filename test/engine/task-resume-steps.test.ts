// Guarantees (HOST-091, HOST-081): a resumed task matches recorded commands to its steps by `task_step`, so a step
// with a never-executed command followed by its completed rerun (a task cut off twice) keeps the rerun's receipt and
// runs nothing again (matching by order would have taken the lost command for step 1 and run the step a second
// time); intents recorded without `task_step` are still matched by order per endpoint. Real SQLite
// ledger; the engine must not be asked to send anything.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { H, SimulatedClock } from '../../src/core/index.js';
import { openDb, openLedger } from '../../src/ledger/index.js';
import type { DurableLedger } from '../../src/ledger/index.js';
import { resumeTask } from '../../src/engine/task-resume.js';
import type { TaskResumeDeps } from '../../src/engine/task-resume.js';
import type { TaskStep } from '../../src/engine/task-runner.js';

const dir = mkdtempSync(join(tmpdir(), 'mhs-resume-steps-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const EP = 'mhs://t/conveyor';
const step: TaskStep = { endpoint: EP, device: 'belt', capability: 'cap.world.step.v1', input: { ticks: 1 } };

async function ledgerWith(
  name: string,
  numbered: boolean,
  rerunRecorded = true,
): Promise<{ ledger: DurableLedger; taskId: string; seq: number }> {
  const ledger = await openLedger(await openDb(join(dir, `${name}.db`)), { clock: new SimulatedClock() });
  const taskId = `tsk_${name}`;
  const start = await ledger.append({ kind: 'parent_action', phase: 'start', task_id: taskId, traceparent: null });
  const intent = (cmd: string, i: number) => ({
    kind: 'command.intent' as const,
    command_id: cmd,
    task_id: taskId,
    endpoint_id: EP,
    device_id: step.device,
    capability_id: step.capability,
    input_digest: H(step.input),
    ...(numbered ? { task_step: i } : {}),
  });
  const receipt = (cmd: string) => ({
    kind: 'receipt' as const,
    command_id: cmd,
    endpoint_id: EP,
    receipt: { command_id: cmd, status: 'completed', device_id: step.device },
  });
  await ledger.append(intent('cmd_step0', 0));
  await ledger.append(receipt('cmd_step0'));
  // Step 1: first command never sent (cut off), its rerun completed before the next cut.
  await ledger.append(intent('cmd_step1_lost', 1));
  await ledger.append({ kind: 'command.not_sent', command_id: 'cmd_step1_lost', endpoint_id: EP });
  if (rerunRecorded) {
    await ledger.append(intent('cmd_step1_rerun', 1));
    await ledger.append(receipt('cmd_step1_rerun'));
  }
  return { ledger, taskId, seq: start.seq };
}

function engineThatMustNotSend(): TaskResumeDeps['engine'] {
  return {
    invoke: () => Promise.reject(new Error('nothing may be sent again')),
    reconcile: () => Promise.resolve([]),
    handle: () => Promise.reject(new Error('no endpoint is attached')),
  };
}

describe('resumeTask step matching', () => {
  it('by task_step: the completed rerun is step 1, nothing runs again', async () => {
    const { ledger, taskId, seq } = await ledgerWith('numbered', true);
    const r = await resumeTask(
      { engine: engineThatMustNotSend(), ledger },
      { taskId, parentSeq: seq, traceparent: null },
      { steps: [step, step] },
    );
    expect(r.rerun).toEqual([]);
    expect(r.steps.map((s) => s.commandId)).toEqual(['cmd_step0', 'cmd_step1_rerun']);
    expect(r.ok).toBe(true);
  });

  it('without task_step (older ledgers): matched by order; a step whose command never ran is run again', async () => {
    const { ledger, taskId, seq } = await ledgerWith('unnumbered', false, false);
    const sent: string[] = [];
    const engine: TaskResumeDeps['engine'] = {
      ...engineThatMustNotSend(),
      invoke: async (req) => {
        sent.push(req.capabilityId);
        throw new Error('stop here');
      },
    };
    const r = await resumeTask(
      { engine, ledger },
      { taskId, parentSeq: seq, traceparent: null },
      { steps: [step, step] },
    );
    expect(r.steps[0]?.commandId).toBe('cmd_step0');
    expect(r.rerun).toEqual([1]);
    expect(sent).toEqual([step.capability]);
  });
});
