// Issue 19, every process serves every client: with two real `mhs-host serve` processes on one real PostgreSQL store
// (a schema of its own; skipped without MHS_TEST_PG_URL), a run started through B (so B drives it) streams its live
// events to an SSE client connected to A, in order up to the terminal event, exactly as its stored log; and a chain
// of long polls on A returns each of B's new events as it is appended, never ending at its timeout. Without the
// cross-process notification, A's stream would not see B's live events and a poll on A would time out. A cancel
// sent to A of a run B drives reaches B: the run ends cancelled with the caller's reason (only B, the lease holder, may write it).
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of HTTP responses are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/openwop/types.js';
import { PG_URL, postgresBackend } from '../ledger/helpers.js';
import type { StoreHandle } from '../ledger/helpers.js';
import { client, logProblems, makeToken, readSse, serve } from './serve-helpers.js';
import type { Served } from './serve-helpers.js';
import { delayChain } from '../helpers/chain-workflow.js';

const workflow = delayChain('scale-sse', 700);
const TERMINAL = ['completed', 'failed', 'cancelled'];

describe.skipIf(!PG_URL)('live events of a run driven by another process', () => {
  let store: StoreHandle;
  let token = '';
  let opToken = '';
  let a: Served;
  let b: Served;

  beforeAll(async () => {
    store = await postgresBackend.fresh();
    token = await makeToken(store.location, 'client');
    opToken = await makeToken(store.location, 'operator', 'sse-op');
    // One after another: the first creates the schema, the second finds it.
    a = await serve(store.location, ['--no-workflows', '--no-mhs']);
    b = await serve(store.location, ['--no-workflows', '--no-mhs']);
    expect((await client(b.url, opToken).post('/v1/workflows', workflow)).status).toBe(201);
  }, 120_000);
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await store?.cleanup();
  });

  const ownerOf = async (runId: string): Promise<string | undefined> => {
    const hosts = (await client(a.url, token).get('/v1/operator/hosts')).body;
    return hosts.processes.find((h: any) => h.runs.some((r: any) => r.run_id === runId))?.owner;
  };

  it('an SSE client on A sees every live event of a run B drives, in order, up to the terminal event', async () => {
    const runId = (await client(b.url, token).post('/v1/runs', { workflowId: 'scale-sse' })).body.runId as string;
    expect(await ownerOf(runId)).toMatch(new RegExp(`:${b.child.pid}$`));
    const before = (await client(a.url, token).get(`/v1/runs/${runId}`)).body;
    expect(TERMINAL).not.toContain(before.status);
    // The stream ends only on the terminal event, which B appends after A's stream has read the stored log.
    const streamed = await readSse(`${a.url}/v1/runs/${runId}/events?streamMode=debug`, token);
    const log = await client(a.url, token).events(runId);
    expect(TERMINAL).toContain((await client(a.url, token).get(`/v1/runs/${runId}`)).body.status);
    expect(logProblems(log)).toEqual([]);
    expect(streamed.events.map((e) => [e.sequence, e.type, e.eventId])).toEqual(
      log.map((e) => [e.sequence, e.type, e.eventId]),
    );
    expect(log.filter((e) => e.sequence > before.lastSequence).length).toBeGreaterThan(0);
  }, 60_000);

  it('a long poll on A returns the new events B appends', async () => {
    const runId = (await client(b.url, token).post('/v1/runs', { workflowId: 'scale-sse' })).body.runId as string;
    expect(await ownerOf(runId)).toMatch(new RegExp(`:${b.child.pid}$`));
    const api = client(a.url, token);
    const polled: RunEvent[] = [];
    const polls: any[] = [];
    let after = -1;
    for (;;) {
      const p = (await api.get(`/v1/runs/${runId}/events/poll?afterSequence=${after}&timeout=30000`)).body;
      polls.push(p);
      polled.push(...(p.events as RunEvent[]));
      after = p.lastSequence;
      if (p.isComplete && !p.timedOut) {
        const snap = (await api.get(`/v1/runs/${runId}`)).body;
        if (after >= snap.lastSequence) break;
      }
      if (p.timedOut) break;
    }
    // Each poll that had to wait (the run spends its delays on B) was woken by B's append, never by its timeout.
    expect(polls.map((p) => p.timedOut)).toEqual(polls.map(() => false));
    const log = await api.events(runId);
    expect(polled.map((e) => e.eventId)).toEqual(log.map((e) => e.eventId));
    expect(polls.length).toBeGreaterThan(1);
  }, 90_000);

  it('a cancel sent to A of a run B drives reaches B, and A answers with the cancelled run', async () => {
    const slow = {
      ...workflow,
      id: 'scale-sse-slow',
      nodes: workflow.nodes.map((n) => (n.typeId === 'core.delay' ? { ...n, config: { durationMs: 60_000 } } : n)),
    };
    expect((await client(b.url, opToken).post('/v1/workflows', slow)).status).toBe(201);
    const runId = (await client(b.url, token).post('/v1/runs', { workflowId: slow.id })).body.runId as string;
    expect(await ownerOf(runId)).toMatch(new RegExp(`:${b.child.pid}$`));
    const api = client(a.url, token);
    await api.until(runId, (s) => s.nodeStates?.wait1?.status === 'running');
    const res = await api.post(`/v1/runs/${runId}/cancel`, { reason: 'forwarded' });
    expect(res.status).toBeLessThan(300);
    expect(res.body.status).toBe('cancelled');
    const log = await api.events(runId);
    expect(logProblems(log)).toEqual([]);
    expect(log[log.length - 1]!.type).toBe('run.cancelled');
    // The caller's reason and principal travelled with the forwarded cancel.
    expect(log[log.length - 1]!.payload.reason).toBe('forwarded');
    expect(log[log.length - 1]!.payload.cancelledBy).not.toBe('system');
    expect(await ownerOf(runId)).toBeUndefined();
  }, 60_000);
});
