// Guarantees (issue 7 §2): runs are durable. A `mhs-host serve` child is SIGKILLed while runs wait on a
// core.delay, an approval interrupt and a child run; restarted on the same SQLite file, every run
// continues from its last recorded step and completes, no node that completed runs again (one
// node.started per node), and the logs stay gap-free with one terminal event last.
import { afterAll, describe, expect, it } from 'vitest';
import { client, logProblems, makeToken, serve, tempDb } from './serve-helpers.js';
import type { Served } from './serve-helpers.js';

let srv: Served | undefined;
afterAll(async () => {
  await srv?.stop();
});

const delayed = {
  id: 'durable-delay',
  name: 'Durable delay',
  version: '1',
  nodes: [
    { id: 'first', typeId: 'core.noop', name: 'first', position: { x: 0, y: 0 }, config: {}, inputs: {} },
    {
      id: 'wait',
      typeId: 'core.delay',
      name: 'wait',
      position: { x: 1, y: 0 },
      config: { durationMs: 1500 },
      inputs: {},
    },
    { id: 'last', typeId: 'core.noop', name: 'last', position: { x: 2, y: 0 }, config: {}, inputs: {} },
  ],
  edges: [
    { id: 'e1', sourceNodeId: 'first', targetNodeId: 'wait' },
    { id: 'e2', sourceNodeId: 'wait', targetNodeId: 'last' },
  ],
  triggers: [{ id: 'manual', type: 'manual' }],
  variables: [],
  metadata: {},
  settings: {},
};

const terminal = (s: Record<string, unknown>) => ['completed', 'failed', 'cancelled'].includes(s.status as string);

describe('durability across SIGKILL', () => {
  it('runs waiting on a delay, an interrupt and a child run resume and complete with no node re-run', async () => {
    const db = tempDb();
    const token = await makeToken(db, 'client');
    srv = await serve(db, ['--no-workflows']);
    let api = client(srv.url, token);
    expect(
      (await client(srv.url, await makeToken(db, 'operator', 'dur-op')).post('/v1/workflows', delayed)).status,
    ).toBe(201);
    const delayRun = (await api.post('/v1/runs', { workflowId: 'durable-delay' })).body.runId as string;
    const gateRun = (await api.post('/v1/runs', { workflowId: 'conformance-approval-reject-loopback' })).body
      .runId as string;
    const parentRun = (await api.post('/v1/runs', { workflowId: 'conformance-subworkflow-mid-run-mutation' })).body
      .runId as string;
    // The delay's due time is recorded (a checkpoint event) before we pull the plug.
    await api.until(delayRun, (s) => s.nodeStates.wait.status === 'running' && s.lastSequence >= 4);
    await api.until(gateRun, (s) => s.status === 'waiting-approval');
    await api.until(parentRun, (s) => s.lastSequence >= 2);
    await srv.kill();

    srv = await serve(db, ['--no-workflows']);
    api = client(srv.url, token);
    const childId = (
      (await api.events(parentRun)).find((e) => e.type === 'log.appended')!.payload.fields as { childRunId: string }
    ).childRunId;
    await api.until(childId, (s) => s.status === 'waiting-approval');
    expect((await api.post(`/v1/runs/${childId}/interrupts/child-gate`, { action: 'accept' })).status).toBe(200);
    expect((await api.post(`/v1/runs/${gateRun}/interrupts/gate`, { action: 'accept' })).status).toBe(200);
    for (const id of [delayRun, gateRun, parentRun, childId]) {
      expect((await api.until(id, terminal)).status).toBe('completed');
      const events = await api.events(id);
      expect(logProblems(events)).toEqual([]);
      expect(events.some((e) => e.type === 'run.resuming')).toBe(true);
      const starts = new Map<string, number>();
      for (const e of events) if (e.type === 'node.started') starts.set(e.nodeId!, (starts.get(e.nodeId!) ?? 0) + 1);
      for (const [nodeId, n] of starts) expect({ nodeId, n }).toEqual({ nodeId, n: 1 });
    }
    // The interrupt was not asked twice: one interrupt.requested for the gate, resolved once.
    const gateEvents = await api.events(gateRun);
    expect(gateEvents.filter((e) => e.type === 'interrupt.requested')).toHaveLength(1);
    // The child run was not started twice.
    expect((await api.events(parentRun)).filter((e) => e.type === 'log.appended')).toHaveLength(1);
  }, 180_000);
});
