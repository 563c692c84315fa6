// Guarantees (OpenWOP v2 runs.md §Pause and resume, `drainPolicy: immediate`), over real HTTP against `mhs-host serve`
// on SQLite and, when MHS_TEST_PG_URL is set, PostgreSQL, under OpenWOP-Version 2: an immediate pause of a run whose
// in-flight node is pure (`core.delay`) answers 202 `paused` and appends `run.paused {drainPolicy: "immediate",
// interruptedNodeId, interruptedAttempt}`; the cut attempt gets no terminal node event; the run stays paused across a
// restart of the host, which neither resumes nor restarts the cut attempt; the resume begins a fresh attempt (a second
// `node.started` whose history starts anew: it draws a new sleep due time from the variable set while paused, where a
// resumed attempt would keep the first one's) and the run completes with one terminal event for the node.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../../ledger/helpers.js';
import type { StoreHandle } from '../../ledger/helpers.js';
import { makeToken, serve } from '../../server/serve-helpers.js';
import type { Served } from '../../server/serve-helpers.js';
import { call, pollToEnd, v2EventProblems } from './v2-kit.js';

const WF = {
  id: 'pause-immediate-delay',
  name: 'Pause immediate: delay then noop',
  version: '1.0',
  nodes: [
    {
      id: 'wait',
      typeId: 'core.delay',
      name: 'Wait',
      position: { x: 0, y: 0 },
      config: {},
      inputs: { delayMs: { type: 'variable', variableName: 'delayMs' } },
    },
    { id: 'after', typeId: 'core.noop', name: 'After', position: { x: 1, y: 0 }, config: {}, inputs: {} },
  ],
  edges: [{ id: 'e1', sourceNodeId: 'wait', targetNodeId: 'after' }],
  triggers: [{ id: 'manual', type: 'manual' }],
  variables: [{ name: 'delayMs', type: 'number', defaultValue: 600000 }],
  metadata: {},
  settings: {},
};

const TERMINAL = new Set(['node.completed', 'node.failed', 'node.cancelled', 'node.skipped']);
const dueOf = (e: any): number | undefined =>
  e.payload?.fields?.checkpoint === 'sleep:0' ? (e.payload.fields.value as number) : undefined;

describe.each(BACKENDS)('v2 immediate pause on $name', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let client: string;
  const v2 = (method: string, path: string, body?: unknown) =>
    call(srv.url, method, path, { token: client, version: '2', ...(body !== undefined ? { body } : {}) });
  const events = async (seg: string): Promise<any[]> =>
    (await v2('GET', `/runs/${seg}/events/poll?afterSequence=0&timeout=1`)).body.events;
  async function untilEvent(seg: string, pred: (e: any) => boolean): Promise<any[]> {
    for (;;) {
      const log = await events(seg);
      if (log.some(pred)) return log;
      await v2('GET', `/runs/${seg}/events/poll?afterSequence=${log.at(-1)?.sequence ?? 0}&timeout=5`);
    }
  }

  beforeAll(async () => {
    h = await backend.fresh();
    client = await makeToken(h.location, 'client');
    const operator = await makeToken(h.location, 'operator', 'op');
    srv = await serve(h.location, ['--enable-test-seams']);
    expect((await call(srv.url, 'POST', '/v1/workflows', { token: operator, body: WF })).status).toBe(201);
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
  });

  it('cuts the pure attempt, stays paused across a restart, and the resume begins a fresh attempt', async () => {
    const run = await v2('POST', '/runs', { workflowId: WF.id });
    expect(run.status).toBe(201);
    const seg = (run.body.eventsUrl as string).split('/')[2]!;
    const engineId = (run.body.runId as string).replace(/^local\//, '').replace('-', '_');
    // The attempt is sleeping (its due time recorded, ten minutes away).
    const before = await untilEvent(seg, (e) => dueOf(e) !== undefined);
    const firstDue = before.map(dueOf).find((d) => d !== undefined)!;

    const paused = await v2('POST', `/runs/${seg}:pause`, { drainPolicy: 'immediate', reason: 'bench swap' });
    expect(paused.status).toBe(202);
    expect(paused.body).toMatchObject({ runId: run.body.runId, status: 'paused' });
    const log = await untilEvent(seg, (e) => e.type === 'run.paused');
    const pauseEvt = log.find((e) => e.type === 'run.paused');
    expect(pauseEvt.payload).toMatchObject({
      drainPolicy: 'immediate',
      reason: 'bench swap',
      interruptedNodeId: 'wait',
      interruptedAttempt: 1,
    });
    expect(v2EventProblems(pauseEvt)).toEqual([]);
    expect((await v2('GET', `/runs/${seg}`)).body.status).toBe('paused');

    // While paused the next attempt's input changes; a restart neither resumes nor restarts the cut attempt.
    const set = await call(srv.url, 'POST', `/v1/host/sample/test/runs/${engineId}/variables`, {
      token: client,
      body: { variables: { delayMs: 10 } },
    });
    expect(set.status).toBe(200);
    await srv.stop();
    srv = await serve(h.location, ['--enable-test-seams']);
    await untilEvent(seg, (e) => e.type === 'run.resume-started'); // v1 `run.resuming`
    expect((await v2('GET', `/runs/${seg}`)).body.status).toBe('paused');
    const recovered = await events(seg);
    expect(recovered.filter((e) => e.type === 'node.started' && e.nodeId === 'wait')).toHaveLength(1);
    expect(recovered.some((e) => TERMINAL.has(e.type) && e.nodeId === 'wait')).toBe(false);

    const resumed = await v2('POST', `/runs/${seg}:resume`, {});
    expect(resumed.status).toBe(202);
    const { events: all, last } = await pollToEnd(srv.url, run.body.eventsUrl, client);
    expect(last.status).toBe('completed');
    const starts = all.filter((e) => e.type === 'node.started' && e.nodeId === 'wait');
    expect(starts).toHaveLength(2);
    // One terminal event for the node: the fresh attempt's, after its own start (the cut attempt has none).
    const ends = all.filter((e) => TERMINAL.has(e.type) && e.nodeId === 'wait');
    expect(ends.map((e) => e.type)).toEqual(['node.completed']);
    expect(ends[0].sequence).toBeGreaterThan(starts[1].sequence);
    expect(ends[0].payload.outputs).toEqual({ delayedMs: 10 });
    // The fresh attempt drew its own due time after its own start; a resumed one would have kept the first.
    const dues = all.filter((e) => dueOf(e) !== undefined);
    expect(dues).toHaveLength(2);
    expect(dues[1].sequence).toBeGreaterThan(starts[1].sequence);
    expect(dueOf(dues[1])!).toBeLessThan(firstDue);
    const order = all.map((e) => e.type);
    expect(order.indexOf('run.resumed')).toBeLessThan(all.indexOf(starts[1]));
  });

  it('without a restart: the resume begins a fresh attempt of the cut node, and the run completes', async () => {
    const run = await v2('POST', '/runs', { workflowId: WF.id });
    const seg = (run.body.eventsUrl as string).split('/')[2]!;
    const engineId = (run.body.runId as string).replace(/^local\//, '').replace('-', '_');
    await untilEvent(seg, (e) => dueOf(e) !== undefined);
    expect((await v2('POST', `/runs/${seg}:pause`, { drainPolicy: 'immediate' })).status).toBe(202);
    const set = await call(srv.url, 'POST', `/v1/host/sample/test/runs/${engineId}/variables`, {
      token: client,
      body: { variables: { delayMs: 5 } },
    });
    expect(set.status).toBe(200);
    expect((await v2('POST', `/runs/${seg}:resume`, {})).status).toBe(202);
    const { events: all, last } = await pollToEnd(srv.url, run.body.eventsUrl, client);
    expect(last.status).toBe('completed');
    expect(all.filter((e) => e.type === 'node.started' && e.nodeId === 'wait')).toHaveLength(2);
    const ends = all.filter((e) => TERMINAL.has(e.type) && e.nodeId === 'wait');
    expect(ends.map((e) => [e.type, e.payload.outputs])).toEqual([['node.completed', { delayedMs: 5 }]]);
  });
});
