// Guarantees (issue 19), over HTTP against `mhs-host serve` on SQLite with real simulators: while a step of an
// mhs.task waits for an operator's approval, the run shows `waiting-approval` with an approval interrupt naming the
// step (`stepIndex`, `stepId`; the interrupt shape of mhs.invoke). It is answered through the run's interrupt route
// (operator only) or the operator API, the interrupt resolved with the decision; cancelling the run while a step
// waits voids that step's approval and sends nothing more. Cancelling a run whose mhs.task or mhs.invoke node has a
// command in flight that needed no approval still ends the run (the node settles its command; no approval is voided).
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RunEvent } from '../../src/openwop/types.js';
import { ledgerEntries, startMhsHost } from '../helpers/mhs-host.js';
import type { MhsHost } from '../helpers/mhs-host.js';
import { client } from './serve-helpers.js';

vi.setConfig({ hookTimeout: 180_000, testTimeout: 90_000 });

let host: MhsHost<'thermo' | 'lh' | 'slow' | 'slow2'>;
type Api = ReturnType<typeof client>;

const terminal = (s: Record<string, any>): boolean => ['completed', 'failed', 'cancelled'].includes(s.status);

/** Waits (long-polling the run's event log) until `pred` holds of its events. */
async function untilEvents(api: Api, runId: string, pred: (events: RunEvent[]) => boolean): Promise<RunEvent[]> {
  for (;;) {
    const events = await api.events(runId);
    if (pred(events)) return events;
    await api.get(`/v1/runs/${runId}/events/poll?afterSequence=${events.at(-1)?.sequence ?? -1}&timeout=5000`);
  }
}

const requested = (events: RunEvent[]): RunEvent[] =>
  events.filter((e) => e.type === 'interrupt.requested' && (e.payload.data as any)?.artifactType === 'mhs.approval');
const resolvedKeys = (events: RunEvent[]): string[] =>
  events.filter((e) => e.type === 'interrupt.resolved').map((e) => e.payload.interruptId as string);

beforeAll(async () => {
  host = await startMhsHost({
    prefix: 'task-apr',
    sims: {
      thermo: ['thermostat', ['--time-scale', '50']],
      lh: ['liquid-handler', ['--operator-tools']],
      // One each: a task's cancelled command stays unknown (its device gate closed) until reconciled (HOST-091).
      slow: ['conveyor', ['--latency-ms', '1500']],
      slow2: ['conveyor', ['--latency-ms', '1500']],
    },
    tokens: { c: 'client', op: 'operator' },
  });
  const lh = { endpoint: host.sims.lh.endpointId, device: 'liquid-handler' };
  const task = {
    id: 'task',
    typeId: 'mhs.task',
    name: 'task',
    position: { x: 0, y: 0 },
    inputs: {},
    config: {
      steps: [
        {
          id: 'warm',
          endpoint: host.sims.thermo.endpointId,
          device: 'thermostat',
          capability: 'cap.thermal.setpoint.v1',
          input: { setpoint_c: 25 },
        },
        { id: 'aspirate', ...lh, capability: 'cap.liquid.aspirate.v1', input: { volume_ul: 5 } },
        { id: 'dispense', ...lh, capability: 'cap.liquid.dispense.v1', input: { volume_ul: 5 } },
      ],
    },
  };
  const wf = {
    id: 'task-apr',
    name: 'task-apr',
    version: '1',
    nodes: [task],
    edges: [],
    triggers: [{ id: 'manual', type: 'manual' }],
    variables: [],
    metadata: {},
    settings: {},
  };
  const op = client(host.srv!.url, host.tokens.op!);
  expect((await op.post('/v1/workflows', wf)).status).toBe(201);
  const advance = (endpoint: string) => ({
    endpoint,
    device: 'conveyor-workcell',
    capability: 'cap.world.step.v1',
    input: { ticks: 1 },
  });
  for (const [id, typeId, config] of [
    ['slow-task', 'mhs.task', { steps: [{ id: 'advance', ...advance(host.sims.slow.endpointId) }] }],
    ['slow-invoke', 'mhs.invoke', advance(host.sims.slow2.endpointId)],
  ] as const)
    expect(
      (
        await op.post('/v1/workflows', {
          ...wf,
          id,
          name: id,
          nodes: [{ ...task, id: 'n', name: 'n', typeId, config }],
        })
      ).status,
    ).toBe(201);
});

afterAll(async () => {
  await host?.stop();
});

describe('issue 19: approvals of mhs.task steps on the run', () => {
  it('each waiting step shows waiting-approval naming the step; answered by the interrupt route and the operator API', async () => {
    const api = client(host.srv!.url, host.tokens.c!);
    const op = client(host.srv!.url, host.tokens.op!);
    const runId = (await api.post('/v1/runs', { workflowId: 'task-apr' })).body.runId as string;

    const waiting = await api.until(runId, (s) => s.status === 'waiting-approval');
    expect(waiting.currentNodeId).toBe('task');
    let events = await untilEvents(api, runId, (ev) => requested(ev).length === 1);
    const first = requested(events)[0]!;
    const pending = (await op.get('/v1/operator/approvals?status=pending')).body.approvals as any[];
    const aspirate = pending.find((a) => a.run_id === runId);
    expect(aspirate).toMatchObject({ node_id: 'task', capability_id: 'cap.liquid.aspirate.v1' });
    expect(first.nodeId).toBe('task');
    expect(first.payload).toMatchObject({
      kind: 'approval',
      key: `mhs:${aspirate.approval_id}`,
      data: {
        artifactId: aspirate.approval_id,
        artifactType: 'mhs.approval',
        actions: ['accept', 'reject'],
        stepIndex: 1,
        stepId: 'aspirate',
      },
    });
    expect((first.payload.data as any).title).toContain('step 1 (aspirate)');

    // Only an operator decides an MHS approval through the interrupt route.
    expect((await api.post(`/v1/runs/${runId}/interrupts/task`, { action: 'accept' })).body.error).toBe('forbidden');
    expect((await op.post(`/v1/runs/${runId}/interrupts/task`, { action: 'accept' })).status).toBe(200);

    // The aspirate interrupt is resolved with the decision; the dispense step then waits in its turn.
    events = await untilEvents(api, runId, (ev) => requested(ev).length === 2);
    const resolved = events.find(
      (e) => e.type === 'interrupt.resolved' && e.payload.interruptId === `mhs:${aspirate.approval_id}`,
    );
    expect(resolved?.payload).toMatchObject({ resumeValue: { action: 'accept', approvalStatus: 'approved' } });
    const second = requested(events)[1]!;
    expect(second.payload.data).toMatchObject({ stepIndex: 2, stepId: 'dispense' });
    await api.until(runId, (s) => s.status === 'waiting-approval');

    const dispenseId = (second.payload.data as any).artifactId as string;
    expect((await op.post(`/v1/operator/approvals/${dispenseId}/approve`, {})).status).toBe(200);
    const done = await api.until(runId, terminal);
    expect(done.status).toBe('completed');
    events = await api.events(runId);
    expect(resolvedKeys(events)).toEqual(expect.arrayContaining([`mhs:${aspirate.approval_id}`, `mhs:${dispenseId}`]));
    const out = done.nodeStates.task.outputs as any;
    expect(out.steps.map((x: any) => x.receipt.status)).toEqual(['completed', 'completed', 'completed']);
  });

  it('a rejected step fails the task with the interrupt resolved as a reject; the next step is never asked', async () => {
    const api = client(host.srv!.url, host.tokens.c!);
    const op = client(host.srv!.url, host.tokens.op!);
    const runId = (await api.post('/v1/runs', { workflowId: 'task-apr' })).body.runId as string;
    await api.until(runId, (s) => s.status === 'waiting-approval');
    expect((await op.post(`/v1/runs/${runId}/interrupts/task`, { action: 'reject' })).status).toBe(200);
    expect((await api.until(runId, terminal)).status).toBe('failed');
    const events = await api.events(runId);
    expect(requested(events).map((e) => (e.payload.data as any).stepId)).toEqual(['aspirate']);
    const resolved = events.find((e) => e.type === 'interrupt.resolved');
    expect(resolved?.payload).toMatchObject({ resumeValue: { action: 'reject', approvalStatus: 'denied' } });
  });

  it('cancelling the run while a step waits voids that approval; nothing more is sent', async () => {
    const api = client(host.srv!.url, host.tokens.c!);
    const op = client(host.srv!.url, host.tokens.op!);
    const runId = (await api.post('/v1/runs', { workflowId: 'task-apr' })).body.runId as string;
    await api.until(runId, (s) => s.status === 'waiting-approval');
    const [step] = requested(await api.events(runId));
    const approvalId = (step!.payload.data as any).artifactId as string;

    expect((await api.post(`/v1/runs/${runId}/cancel`, { reason: 'changed my mind' })).status).toBeLessThan(300);
    expect((await api.until(runId, terminal)).status).toBe('cancelled');
    expect((await op.get(`/v1/operator/approvals/${approvalId}`)).body).toMatchObject({
      status: 'voided',
      reason: 'run_cancelled',
    });
    expect((await op.post(`/v1/operator/approvals/${approvalId}/approve`, {})).status).toBe(409);
    // The route no longer answers the interrupt of an ended run.
    expect((await op.post(`/v1/runs/${runId}/interrupts/task`, { action: 'accept' })).status).toBeGreaterThanOrEqual(
      400,
    );
    const entries = await ledgerEntries(host.dbPath);
    expect(entries.filter((e) => e.kind === 'approval' && e.approval_id === approvalId)).toMatchObject([
      { event: 'requested' },
      { event: 'voided', reason: 'run_cancelled', run_id: runId, node_id: 'task' },
      { event: 'vote_refused', status: 'voided', decision: 'approve' },
    ]);
    const intents = entries.filter((e) => e.kind === 'command.intent' && e.run_id === runId);
    expect(intents.map((e) => e.capability_id)).toEqual(['cap.thermal.setpoint.v1']);
  });

  for (const workflowId of ['slow-task', 'slow-invoke'])
    it(`${workflowId}: cancelled with a command in flight that needed no approval, the run still ends`, async () => {
      const api = client(host.srv!.url, host.tokens.c!);
      const runId = (await api.post('/v1/runs', { workflowId })).body.runId as string;
      // The conveyor answers after 1.5 s: the intent is journaled, the command in flight.
      for (;;) {
        const entries = await ledgerEntries(host.dbPath);
        if (entries.some((e) => e.kind === 'command.intent' && e.run_id === runId)) break;
        await new Promise((r) => setTimeout(r, 25));
      }
      expect((await api.post(`/v1/runs/${runId}/cancel`, { reason: 'stop' })).status).toBeLessThan(300);
      expect((await api.until(runId, terminal)).status).toBe('cancelled');
    });
});
