// Issue 19, two approvals of one node at once: two real `mhs-host serve` processes on one real PostgreSQL store (skipped
// without MHS_TEST_PG_URL), two real HTTP liquid-handler simulators, both held by A (spreading off). An `mhs.task` run B
// drives has one aspirate step on each endpoint; the steps run side by side, so both wait for an approval at once and
// both interrupts are on the run's `task` node. Answered through A's interrupt route (forwarded to B), an answer that
// names no interrupt is refused (a guess could approve the wrong device); each is answered by its own interrupt id,
// the run keeps `waiting-approval` while the other still waits, and completes with each command executed once.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of HTTP responses are read loosely in assertions */
import { describe, expect, it } from 'vitest';
import { PG_URL } from '../ledger/helpers.js';
import { endpointPair, heldBy, pairConnector } from '../helpers/endpoint-pair.js';
import { simCounters } from './scale-out-helpers.js';
import { client, logProblems, makeToken } from './serve-helpers.js';
import type { Served } from './serve-helpers.js';

const DEVICE = 'liquid-handler';
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ended = (s: any) => ['completed', 'failed', 'cancelled'].includes(s.status);

describe.skipIf(!PG_URL)('an mhs.task whose two parallel steps wait for approvals at once', () => {
  const h = endpointPair({
    family: 'liquid-handler',
    prefix: 'tint',
    // A long lease: nothing here fails over, and a loaded machine must not let A's lapse mid-test.
    env: { MHS_RUN_LEASE_TTL_MS: '6000', MHS_RUN_LEASE_SKEW_MS: '200', MHS_ENDPOINT_SPREAD: 'off' },
    count: 2,
    simFlags: ['--operator-tools'],
  });

  it('each interrupt is answered by its id through the other process; the run completes', async () => {
    const [a, b] = h.procs as [Served, Served];
    const token = await makeToken(h.store.location, 'client', 'tint-client');
    for (const i of [0, 1]) await heldBy(b, a, token, pairConnector('tint', 'liquid-handler', i));
    const wf = {
      id: 'tint-task',
      name: 'tint-task',
      version: '1',
      nodes: [
        {
          id: 'task',
          typeId: 'mhs.task',
          name: 'task',
          position: { x: 0, y: 0 },
          config: {
            steps: h.sims.map((sim, i) => ({
              id: `asp${i}`,
              endpoint: sim.endpointId,
              device: DEVICE,
              capability: 'cap.liquid.aspirate.v1',
              input: { volume_ul: 10 + i },
            })),
          },
          inputs: {},
        },
      ],
      edges: [],
      triggers: [{ id: 'manual', type: 'manual' }],
      variables: [],
      metadata: {},
      settings: {},
    };
    const opA = client(a.url, await makeToken(h.store.location, 'operator', 'tint-op'));
    expect((await opA.post('/v1/workflows', wf)).status).toBe(201);
    const api = client(b.url, token);
    const runId = (await api.post('/v1/runs', { workflowId: wf.id })).body.runId as string;

    let snap: any;
    for (let i = 0; i < 600; i++) {
      snap = (await api.get(`/v1/runs/${runId}`)).body;
      if (snap.pendingInterrupts?.length === 2 || ended(snap)) break;
      await pause(50);
    }
    const failure = async () =>
      JSON.stringify((await api.events(runId)).find((e: any) => e.type === 'node.failed')?.payload ?? snap);
    expect(snap.status, ended(snap) ? await failure() : '').toBe('waiting-approval');
    const waiting = snap.pendingInterrupts as any[];
    expect(waiting.map((p) => p.nodeId)).toEqual(['task', 'task']);
    expect(waiting.map((p) => p.data.stepIndex).sort()).toEqual([0, 1]);

    // No interrupt named while two wait: refused by B (which drives the run), raised by A; nothing decided.
    const guess = await opA.post(`/v1/runs/${runId}/interrupts/task`, { action: 'accept' });
    expect(guess.status).toBe(400);
    expect(guess.body.error).toBe('validation_error');
    expect([...guess.body.details.pending].sort()).toEqual(waiting.map((p) => p.interruptId).sort());

    const [second, first] = [...waiting].sort((x, y) => y.data.stepIndex - x.data.stepIndex);
    const answer = (p: any) =>
      opA.post(`/v1/runs/${runId}/interrupts/task?interruptId=${encodeURIComponent(p.interruptId)}`, {
        action: 'accept',
      });
    expect((await answer(second)).status).toBe(200);
    // The other still waits: the run says so (before, it read `running` once the latest was answered).
    let after: any;
    for (let i = 0; i < 200; i++) {
      after = (await api.get(`/v1/runs/${runId}`)).body;
      if (after.pendingInterrupts.length === 1) break;
      await pause(50);
    }
    expect(after.pendingInterrupts.map((p: any) => p.interruptId)).toEqual([first.interruptId]);
    expect(after.status).toBe('waiting-approval');
    expect((await answer(first)).status).toBe(200);

    const done = await api.until(runId, ended);
    expect(done.status, JSON.stringify(done.error ?? done)).toBe('completed');
    const log = await api.events(runId);
    expect(logProblems(log)).toEqual([]);
    const resolved = log.filter((e) => e.type === 'interrupt.resolved').map((e) => e.payload.interruptId);
    expect(resolved.sort()).toEqual(waiting.map((p) => p.interruptId).sort());
    for (const sim of h.sims) expect(Object.values((await simCounters(sim, DEVICE)).executions)).toEqual([1]);
  }, 120_000);
});
