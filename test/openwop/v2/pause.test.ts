// Guarantees (OpenWOP v2 runs.md §Pause and resume), over real HTTP against `mhs-host serve` on SQLite and, when
// MHS_TEST_PG_URL is set, PostgreSQL, under OpenWOP-Version 2: `POST /runs/{runId}:pause` answers 202 `paused` and
// appends `run.paused` echoing the drain policy; with `drain-current-node` the node in flight reaches its terminal and no
// further node starts while paused (the run does not complete); the pause survives a restart of the host; `:resume`
// answers 202 `running`, appends `run.resumed`, and the run goes on to complete; a cancel also exits `paused`. Refusals:
// pausing a paused run and resuming a run not paused are 409 `run_state_conflict` with `details.runStatus`, either on
// a terminal run 409 `run_terminal`; an `immediate` drain while a node with an external effect (here an approval
// gate) is in flight is 409 `run_state_conflict` naming the node, and an unknown drain policy 400; neither changes
// anything.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../../ledger/helpers.js';
import type { StoreHandle } from '../../ledger/helpers.js';
import { makeToken, serve } from '../../server/serve-helpers.js';
import type { Served } from '../../server/serve-helpers.js';
import { call, pollToEnd, v2EventProblems, v2Problems } from './v2-kit.js';

const WF = {
  id: 'pause-gate-then-noop',
  name: 'Pause: gate then noop',
  version: '1.0',
  nodes: [
    {
      id: 'gate',
      typeId: 'core.approvalGate',
      name: 'Gate',
      position: { x: 0, y: 0 },
      config: { title: 'Hold', actions: ['accept', 'reject'] },
      inputs: {},
    },
    { id: 'after', typeId: 'core.noop', name: 'After', position: { x: 1, y: 0 }, config: {}, inputs: {} },
  ],
  edges: [{ id: 'e1', sourceNodeId: 'gate', targetNodeId: 'after' }],
  triggers: [{ id: 'manual', type: 'manual' }],
  variables: [],
  metadata: {},
  settings: {},
};

describe.each(BACKENDS)('v2 pause and resume on $name', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let client: string;
  let operator: string;
  const v2 = (method: string, path: string, body?: unknown, token = client) =>
    call(srv.url, method, path, { token, version: '2', ...(body !== undefined ? { body } : {}) });

  /** The run's snapshot once `pred` holds, each miss a long-poll on its log (no sleeps). */
  async function until(seg: string, pred: (snap: any) => boolean): Promise<any> {
    for (;;) {
      const snap = (await v2('GET', `/runs/${seg}`)).body;
      if (pred(snap)) return snap;
      const after = snap.extensions['mhs-host.run'].lastSequence;
      await v2('GET', `/runs/${seg}/events/poll?afterSequence=${after}&timeout=5`);
    }
  }
  /** The run's log once some event satisfies `pred`, each miss a long-poll for the next events. */
  async function untilEvent(seg: string, pred: (e: any) => boolean): Promise<any[]> {
    for (;;) {
      const log = await events(seg);
      if (log.some(pred)) return log;
      await v2('GET', `/runs/${seg}/events/poll?afterSequence=${log.at(-1)?.sequence ?? 0}&timeout=5`);
    }
  }
  const events = async (seg: string): Promise<any[]> =>
    (await v2('GET', `/runs/${seg}/events/poll?afterSequence=0&timeout=1`)).body.events;

  beforeAll(async () => {
    h = await backend.fresh();
    client = await makeToken(h.location, 'client');
    operator = await makeToken(h.location, 'operator', 'op');
    srv = await serve(h.location);
    expect((await call(srv.url, 'POST', '/v1/workflows', { token: operator, body: WF })).status).toBe(201);
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
  });

  async function started(): Promise<string> {
    const run = await v2('POST', '/runs', { workflowId: WF.id });
    expect(run.status).toBe(201);
    const seg = (run.body.eventsUrl as string).split('/')[2]!;
    await until(seg, (s) => s.status === 'waiting-approval');
    return seg;
  }

  it('drains the node in flight, starts nothing while paused, survives a restart, and completes after resume', async () => {
    const seg = await started();
    const paused = await v2('POST', `/runs/${seg}:pause`, { reason: 'shift change' });
    expect(paused.status).toBe(202);
    expect(paused.body).toMatchObject({ status: 'paused' });
    expect(paused.body.runId).toBe(decodeURIComponent(seg.replace(/~2F/gi, '%2F')));
    expect((await v2('GET', `/runs/${seg}`)).body.status).toBe('paused');

    // drain-current-node: the gate may still be answered and completes; `after` does not start.
    const resolved = await v2('POST', `/runs/${seg}/interrupts/gate`, { resumeValue: { action: 'accept' } }, operator);
    expect(resolved.status).toBe(200);
    let log = await untilEvent(seg, (e) => e.type === 'node.completed' && e.nodeId === 'gate');
    expect((await v2('GET', `/runs/${seg}`)).body.status).toBe('paused');
    expect(log.some((e) => e.type === 'node.started' && e.nodeId === 'after')).toBe(false);
    const pausedEvent = log.find((e) => e.type === 'run.paused');
    expect(pausedEvent.payload).toEqual({ drainPolicy: 'drain-current-node', reason: 'shift change' });
    for (const e of log) expect(v2EventProblems(e), e.type).toEqual([]);

    // A restart keeps it paused: nothing starts on recovery.
    expect(await srv.stop()).toBe(0);
    srv = await serve(h.location);
    expect((await v2('GET', `/runs/${seg}`)).body.status).toBe('paused');
    log = await events(seg);
    expect(log.some((e) => e.type === 'node.started' && e.nodeId === 'after')).toBe(false);

    const resumed = await v2('POST', `/runs/${seg}:resume`, { reason: 'back' });
    expect(resumed.status).toBe(202);
    expect(resumed.body.status).toBe('running');
    const end = await pollToEnd(srv.url, `/runs/${seg}/events`, client);
    expect(end.last.status).toBe('completed');
    log = await events(seg);
    const types = log.map((e) => e.type);
    expect(types.indexOf('run.resumed')).toBeGreaterThan(types.indexOf('run.paused'));
    const afterStart = log.findIndex((e) => e.type === 'node.started' && e.nodeId === 'after');
    expect(afterStart).toBeGreaterThan(types.indexOf('run.resumed'));
  });

  it('refuses what the state machine forbids, each refusal leaving the run as it was', async () => {
    const seg = await started();
    const resumeRunning = await v2('POST', `/runs/${seg}:resume`, {});
    expect(resumeRunning.status).toBe(409);
    expect(resumeRunning.body).toMatchObject({
      error: 'run_state_conflict',
      details: { runStatus: 'waiting-approval' },
    });
    expect(v2Problems('error-envelope', resumeRunning.body)).toEqual([]);

    // The gate's attempt is no pure node: an immediate pause cannot cut it (pause-immediate.test.ts cuts one).
    const immediate = await v2('POST', `/runs/${seg}:pause`, { drainPolicy: 'immediate' });
    expect(immediate.status).toBe(409);
    expect(immediate.body).toMatchObject({
      error: 'run_state_conflict',
      details: { runStatus: 'waiting-approval', nodeId: 'gate', supported: ['drain-current-node'] },
    });
    expect((await v2('POST', `/runs/${seg}:pause`, { drainPolicy: 'sudden' })).status).toBe(400);
    expect((await v2('GET', `/runs/${seg}`)).body.status).toBe('waiting-approval');
    expect((await v2('POST', `/runs/${seg}:pause`, { extra: 1 })).status).toBe(400);

    expect((await v2('POST', `/runs/${seg}:pause`, {})).status).toBe(202);
    const twice = await v2('POST', `/runs/${seg}:pause`, {});
    expect(twice.status).toBe(409);
    expect(twice.body).toMatchObject({ error: 'run_state_conflict', details: { runStatus: 'paused' } });

    // A cancel exits `paused`; then both operations are refused as terminal.
    const cancelled = await v2('POST', `/runs/${seg}/cancel`, {});
    expect(cancelled.status).toBe(200);
    await until(seg, (s) => s.status === 'cancelled');
    for (const op of [':pause', ':resume']) {
      const r = await v2('POST', `/runs/${seg}${op}`, {});
      expect(r.status, op).toBe(409);
      expect(r.body.error, op).toBe('run_terminal');
    }
    const log = await events(seg);
    expect(log.filter((e) => e.type === 'run.paused')).toHaveLength(1);
    expect(log.some((e) => e.type === 'run.resumed')).toBe(false);
  });
});
