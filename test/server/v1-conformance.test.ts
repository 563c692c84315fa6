// Guarantees (issue 17 item 2, each rule as the public v1 spec and conformance suite state it), over HTTP against a
// real `mhs-host serve` on a SQLite file and, when MHS_TEST_PG_URL is set, PostgreSQL:
// - `events/poll?lastSequence=N` answers the events after N (openapi `pollRunEvents`), with `isComplete`; a cursor
//   past the end of the log is a 200 with no events, not a 4xx (version-negotiation scenario);
// - cancelling a run that already finished is idempotent: 200 with its status unchanged and no event added;
// - a fork whose `fromSeq` is past the source log is refused 422 (replay-fork scenario), a negative one 400;
// - two replay forks of one run record identical logs (durations are the recorded ones, not re-measured);
// - a refine approval's `interrupt.resolved` carries the top-level `action` and its `refineFeedback` (RFC 0183);
// - discovery answers with `Cache-Control` and `ETag`, and 304 to a matching `If-None-Match`; it lists the majors the
//   server serves in `protocolVersions` with a 1.x `preferredVersion` (v2 versioning.md §1.1): ["1.0"] alone with
//   `--no-openwop-v2`, else the same list as the v2 root, still valid against the v1 capabilities schema;
// - the supervisor of `conformance-dispatch-loop` (no mock plan, no model) dispatches one worker and then terminates,
//   and the dispatch records one `node.dispatched` naming the child run (RFC 0007 §D).
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of HTTP responses are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../ledger/helpers.js';
import type { StoreHandle } from '../ledger/helpers.js';
import type { RunEvent } from '../../src/openwop/types.js';
import { openwopSchemas, schemaId } from '../../src/openwop/schemas.js';
import { client, logProblems, makeToken, serve, tempDb } from './serve-helpers.js';
import type { Served } from './serve-helpers.js';

const terminal = (s: Record<string, any>) => ['completed', 'failed', 'cancelled'].includes(s.status as string);

/** What two runs of the same history must agree on: everything but the ids, run ids and times. */
function shape(events: RunEvent[]): unknown[] {
  return events.map((e) => ({ type: e.type, nodeId: e.nodeId, sequence: e.sequence, payload: e.payload }));
}

describe.each(BACKENDS)('v1 wire rules ($name)', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    h = await backend.fresh();
    const token = await makeToken(h.location, 'client');
    srv = await serve(h.location, ['--no-workflows']);
    api = client(srv.url, token);
  }, 120_000);

  afterAll(async () => {
    expect(await srv.stop()).toBe(0);
    await h.cleanup();
  });

  async function finished(workflowId: string, inputs?: Record<string, unknown>): Promise<string> {
    const created = await api.post('/v1/runs', { workflowId, ...(inputs ? { inputs } : {}) });
    expect(created.status).toBe(201);
    await api.until(created.body.runId, terminal);
    return created.body.runId as string;
  }

  it('events/poll honours lastSequence, reports isComplete, and answers an empty 200 past the end', async () => {
    const runId = await finished('conformance-multi-node');
    const all = await api.events(runId);
    expect(logProblems(all)).toEqual([]);
    const after = await api.get(`/v1/runs/${runId}/events/poll?lastSequence=2&timeout=1`);
    expect(after.status).toBe(200);
    expect(after.body.events).toEqual(all.filter((e) => e.sequence > 2));
    expect(after.body.isComplete).toBe(true);
    const past = await api.get(`/v1/runs/${runId}/events/poll?lastSequence=${all.length + 50}&timeout=1`);
    expect([past.status, past.body.events, past.body.isComplete]).toEqual([200, [], true]);
    const bad = await api.get(`/v1/runs/${runId}/events/poll?lastSequence=-1`);
    expect([bad.status, bad.body.error]).toEqual([400, 'validation_error']);
  });

  it('cancelling a finished run is an idempotent 200 that changes nothing', async () => {
    const runId = await finished('conformance-noop');
    const before = await api.events(runId);
    const res = await api.post(`/v1/runs/${runId}/cancel`, { reason: 'late' });
    expect([res.status, res.body.runId, res.body.status]).toEqual([200, runId, 'completed']);
    expect(await api.events(runId)).toEqual(before);
    const failedRun = await finished('conformance-failure');
    const again = await api.post(`/v1/runs/${failedRun}/cancel`);
    expect([again.status, again.body.status]).toEqual([200, 'failed']);
  });

  it('a fork fromSeq past the source log is 422; a negative one is 400', async () => {
    const runId = await finished('conformance-noop');
    const events = await api.events(runId);
    const past = await api.post(`/v1/runs/${runId}:fork`, { mode: 'replay', fromSeq: events.length + 10 });
    expect(past.status).toBe(422);
    expect(past.body.error).toBe('fork_point_invalid');
    expect(Object.keys(past.body).sort()).toEqual(['details', 'error', 'message']);
    const negative = await api.post(`/v1/runs/${runId}:fork`, { mode: 'replay', fromSeq: -1 });
    expect([negative.status, negative.body.error]).toEqual([400, 'validation_error']);
  });

  it('two replay forks of one run record identical logs', async () => {
    const source = await finished('conformance-delay', { delayMs: 25 });
    const logs: RunEvent[][] = [];
    for (const key of ['fork-a', 'fork-b']) {
      const f = await api.post(`/v1/runs/${source}:fork`, { mode: 'replay' }, { 'idempotency-key': key });
      expect(f.status).toBe(201);
      const snap = await api.until(f.body.runId, terminal);
      expect(snap.status).toBe('completed');
      logs.push(await api.events(f.body.runId));
    }
    expect(logProblems(logs[0]!)).toEqual([]);
    expect(shape(logs[1]!)).toEqual(shape(logs[0]!));
    // The durations are the source's recorded ones.
    const src = await api.events(source);
    const durations = (l: RunEvent[]) =>
      l.filter((e) => e.type === 'node.completed' || e.type === 'run.completed').map((e) => e.payload.durationMs);
    expect(durations(logs[0]!)).toEqual(durations(src));
  });

  it("a refine approval's interrupt.resolved carries the top-level action and its refineFeedback", async () => {
    const created = await api.post('/v1/runs', { workflowId: 'conformance-approval-refine' });
    await api.until(created.body.runId, (s) => s.status === 'waiting-approval');
    const feedback = { scope: 'whole', text: 'shorter, please' };
    const res = await api.post(`/v1/runs/${created.body.runId}/interrupts/gate`, {
      action: 'refine',
      refineFeedback: feedback,
    });
    expect(res.status).toBe(200);
    const resolved = (await api.events(created.body.runId)).find((e) => e.type === 'interrupt.resolved');
    expect(resolved?.payload).toMatchObject({ action: 'refine', refineFeedback: feedback });
    const unscoped = await api.post('/v1/runs', { workflowId: 'conformance-approval-refine' });
    await api.until(unscoped.body.runId, (s) => s.status === 'waiting-approval');
    const bad = await api.post(`/v1/runs/${unscoped.body.runId}/interrupts/gate`, {
      action: 'refine',
      refineFeedback: { text: 'no scope' },
    });
    expect([bad.status, bad.body.error]).toEqual([400, 'validation_error']);
  });

  it('discovery carries Cache-Control and ETag, and answers 304 to a matching If-None-Match', async () => {
    const first = await fetch(`${srv.url}/.well-known/openwop`);
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toMatch(/max-age=\d+/);
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[^"]+"$/);
    const doc = (await first.json()) as Record<string, unknown>;
    expect(doc.protocolVersion).toBe('1.0');
    // Both majors served by default; through the overlap the preferred version is 1.x (RFC 0179 §A.1).
    expect([doc.protocolVersions, doc.preferredVersion]).toEqual([['1.0', '2.0'], '1.0']);
    expect(openwopSchemas().check(schemaId('capabilities'), doc)).toEqual([]);
    const cached = await fetch(`${srv.url}/.well-known/openwop`, { headers: { 'if-none-match': etag! } });
    expect(cached.status).toBe(304);
    expect(await cached.text()).toBe('');
    const other = await fetch(`${srv.url}/.well-known/openwop`, { headers: { 'if-none-match': '"other"' } });
    expect(other.status).toBe(200);
    expect(other.headers.get('etag')).toBe(etag);
  });

  it('conformance-dispatch-loop without a plan dispatches one worker, then terminates; node.dispatched names it', async () => {
    const runId = await finished('conformance-dispatch-loop');
    const snap = (await api.get(`/v1/runs/${runId}`)).body;
    expect(snap.status).toBe('completed');
    const events = await api.events(runId);
    expect(logProblems(events)).toEqual([]);
    const decisions = events.filter((e) => e.type === 'runOrchestrator.decided').map((e) => e.payload.decision as any);
    expect(decisions.map((d) => d.kind)).toEqual(['next-worker', 'terminate']);
    const dispatched = events.filter((e) => e.type === 'node.dispatched');
    expect(dispatched).toHaveLength(1);
    expect(dispatched[0]!.nodeId).toBe('dispatch');
    const child = (await api.get(`/v1/runs/${dispatched[0]!.payload.childRunId as string}`)).body;
    expect(child).toMatchObject({ parentRunId: runId, status: 'completed' });
    expect(dispatched[0]!.payload).toEqual({
      childRunId: child.runId,
      childWorkflowId: decisions[0].nextWorkerIds[0],
      childStatus: 'completed',
    });
  });
});

describe('v1 discovery beside major 2', () => {
  it('the v1 document lists both majors as the v2 root does, preferring 1.0; --no-openwop-v2 lists only 1.0', async () => {
    const solo = await serve(tempDb(), ['--no-workflows', '--no-mhs', '--no-openwop-v2']);
    try {
      const v1 = (await (await fetch(`${solo.url}/.well-known/openwop`)).json()) as Record<string, unknown>;
      expect([v1.protocolVersions, v1.preferredVersion]).toEqual([['1.0'], '1.0']);
    } finally {
      expect(await solo.stop()).toBe(0);
    }
    const srv = await serve(tempDb(), ['--no-workflows', '--no-mhs']);
    try {
      const v1 = (await (await fetch(`${srv.url}/.well-known/openwop`)).json()) as Record<string, unknown>;
      const v2 = (await (
        await fetch(`${srv.url}/.well-known/openwop`, { headers: { 'openwop-version': '2' } })
      ).json()) as Record<string, unknown>;
      expect([v1.protocolVersion, v1.protocolVersions, v1.preferredVersion]).toEqual(['1.0', ['1.0', '2.0'], '1.0']);
      expect([v1.protocolVersions, v1.preferredVersion]).toEqual([v2.protocolVersions, v2.preferredVersion]);
      expect(openwopSchemas().check(schemaId('capabilities'), v1)).toEqual([]);
    } finally {
      expect(await srv.stop()).toBe(0);
    }
  }, 60_000);
});
