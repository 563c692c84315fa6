// Guarantees (issue 17 item 2): each newly seeded public fixture runs, over HTTP against a real `mhs-host serve`
// (SQLite file; PostgreSQL too when MHS_TEST_PG_URL is set), to the behaviour conformance/fixtures.md documents and
// the public scenarios check:
// - conformance-delay: in flight it is visible as running; its SSE stream carries run.started … run.completed and
//   closes on the terminal event; a reconnect with Last-Event-ID resumes after that event;
// - conformance-idempotent: the same Idempotency-Key and body return the same run (marked replayed), another body
//   under the key is a 409;
// - conformance-failure: terminal failed, the snapshot's error is {code, message};
// - conformance-identity: the nested input payload arrives unchanged as the run variable and the node's output;
// - conformance-multi-node: node.completed for a, b, c in that order; a fork after b re-executes only c;
// - conformance-cancellable: a cancel mid-delay ends the run cancelled;
// - conformance-clarification: waiting-input on a clarification; `{answers: {q1}}` completes it, missing answers 400;
// - conformance-interrupt-parent-child-cancel: while the child's gate is open the parent reads waiting-approval and
//   lists the child in `childRuns`; cancelling the parent cascades (child cancelled, reason parent-cancelled, with
//   parentRunId) and a late resolve of the child's gate is 410 interrupt_gone (interrupt-profiles.md);
// - conformance-cap-breach with configurable.recursionLimit 3: terminal failed recursion_limit_exceeded, exactly one
//   cap.breached {kind: node-executions, limit: 3, observed > 3, nodeId} before run.failed, at most 3 node.started;
// - conformance-version-fold is advertised; without the test seams X-Force-Engine-Version is 403
//   force_engine_version_forbidden (its forced legs run in test/server/v1-seams.test.ts);
// - conformance-interrupt-quorum and conformance-channel-ttl are seeded but not advertised: this host has no quorum
//   gate (a gate with requiredApprovals > 1 is refused at registration, not run as one approval) and no
//   core.channelWrite.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of HTTP responses are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../ledger/helpers.js';
import type { StoreHandle } from '../ledger/helpers.js';
import { client, logProblems, makeToken, readSse, serve } from './serve-helpers.js';
import type { Served } from './serve-helpers.js';

const terminal = (s: Record<string, any>) => ['completed', 'failed', 'cancelled'].includes(s.status as string);

describe.each(BACKENDS)('seeded v1 fixtures run as documented ($name)', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let token: string;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    h = await backend.fresh();
    token = await makeToken(h.location, 'client');
    srv = await serve(h.location, ['--no-workflows']);
    api = client(srv.url, token);
  }, 120_000);

  afterAll(async () => {
    expect(await srv.stop()).toBe(0);
    await h.cleanup();
  });

  it('conformance-delay: running in flight; SSE to the terminal event; Last-Event-ID resumes after it', async () => {
    const { body } = await api.post('/v1/runs', { workflowId: 'conformance-delay', inputs: { delayMs: 400 } });
    const stream = readSse(`${srv.url}/v1/runs/${body.runId}/events?streamMode=debug`, token);
    const inFlight = await api.until(body.runId, (s) => s.nodeStates?.wait?.status === 'running' || terminal(s));
    expect(inFlight.status).toBe('running');
    const got = await stream;
    const types = got.events.map((e) => e.type);
    expect(types[0]).toBe('run.started');
    expect(types.at(-1)).toBe('run.completed');
    expect(got.ids).toEqual(got.events.map((e) => String(e.sequence)));
    const log = await api.events(body.runId);
    expect(logProblems(log)).toEqual([]);
    expect(got.events).toEqual(log);
    const started = log.find((e) => e.type === 'node.started')!;
    const resumed = await readSse(`${srv.url}/v1/runs/${body.runId}/events?streamMode=debug`, token, {
      'last-event-id': String(started.sequence),
    });
    expect(resumed.events).toEqual(log.filter((e) => e.sequence > started.sequence));
  });

  it('conformance-idempotent: one key and body, one run; another body under the key is a 409', async () => {
    const key = { 'idempotency-key': `idem-${backend.name}` };
    const a = await api.post('/v1/runs', { workflowId: 'conformance-idempotent', inputs: { nonce: 'n1' } }, key);
    const b = await api.post('/v1/runs', { workflowId: 'conformance-idempotent', inputs: { nonce: 'n1' } }, key);
    expect([a.status, b.status]).toEqual([201, 200]);
    expect(b.body.runId).toBe(a.body.runId);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    const c = await api.post('/v1/runs', { workflowId: 'conformance-idempotent', inputs: { nonce: 'n2' } }, key);
    expect([c.status, c.body.error]).toEqual([409, 'conflict']);
    expect((await api.until(a.body.runId, terminal)).status).toBe('completed');
  });

  it('conformance-failure: terminal failed with a {code, message} error', async () => {
    const { body } = await api.post('/v1/runs', { workflowId: 'conformance-failure' });
    const snap = await api.until(body.runId, terminal);
    expect(snap.status).toBe('failed');
    expect(typeof snap.error.code).toBe('string');
    expect(typeof snap.error.message).toBe('string');
    const events = await api.events(body.runId);
    expect(logProblems(events)).toEqual([]);
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['node.failed', 'run.failed']));
    expect(events.at(-1)!.payload).toMatchObject({ error: { code: snap.error.code }, failedNodeId: 'fail' });
  });

  it('conformance-identity: the nested payload passes through unchanged', async () => {
    const payload = { a: 1, nested: { list: [1, 'two', { three: true }], empty: {} }, s: 'ü' };
    const { body } = await api.post('/v1/runs', { workflowId: 'conformance-identity', inputs: { payload } });
    const snap = await api.until(body.runId, terminal);
    expect(snap.status).toBe('completed');
    expect(snap.variables.payload).toEqual(payload);
    expect(snap.nodeStates.echo.outputs.payload).toEqual(payload);
  });

  it('conformance-multi-node: a, b, c complete in order; a fork after b re-executes only c', async () => {
    const { body } = await api.post('/v1/runs', { workflowId: 'conformance-multi-node' });
    expect((await api.until(body.runId, terminal)).status).toBe('completed');
    const events = await api.events(body.runId);
    expect(logProblems(events)).toEqual([]);
    const completed = events.filter((e) => e.type === 'node.completed');
    expect(completed.map((e) => e.nodeId)).toEqual(['a', 'b', 'c']);
    const afterB = completed[1]!.sequence + 1;
    const fork = await api.post(`/v1/runs/${body.runId}:fork`, { mode: 'branch', fromSeq: afterB });
    expect(fork.status).toBe(201);
    expect((await api.until(fork.body.runId, terminal)).status).toBe('completed');
    const forked = await api.events(fork.body.runId);
    expect(logProblems(forked)).toEqual([]);
    const live = forked.filter((e) => e.sequence >= afterB && e.type === 'node.started').map((e) => e.nodeId);
    expect(live).toEqual(['c']);
    expect(forked.filter((e) => e.type === 'node.completed').map((e) => e.nodeId)).toEqual(['a', 'b', 'c']);
  });

  it('conformance-cancellable: a cancel mid-delay ends the run cancelled', async () => {
    const { body } = await api.post('/v1/runs', { workflowId: 'conformance-cancellable' });
    await api.until(body.runId, (s) => s.nodeStates?.wait?.status === 'running');
    const res = await api.post(`/v1/runs/${body.runId}/cancel`, { reason: 'conformance' });
    expect(res.status).toBe(200);
    expect((await api.until(body.runId, terminal)).status).toBe('cancelled');
    const events = await api.events(body.runId);
    expect(logProblems(events)).toEqual([]);
    expect(events.at(-1)!.type).toBe('run.cancelled');
  });

  it('conformance-clarification: waits for input; incomplete answers are refused; {answers: {q1}} completes it', async () => {
    const { body } = await api.post('/v1/runs', { workflowId: 'conformance-clarification' });
    const waiting = await api.until(body.runId, (s) => s.status === 'waiting-input' || terminal(s));
    expect(waiting.status).toBe('waiting-input');
    const requested = (await api.events(body.runId)).find((e) => e.type === 'interrupt.requested')!;
    expect(requested.payload).toMatchObject({ kind: 'clarification' });
    const empty = await api.post(`/v1/runs/${body.runId}/interrupts/ask`, { answers: {} });
    expect([empty.status, empty.body.error]).toEqual([400, 'validation_error']);
    const ok = await api.post(`/v1/runs/${body.runId}/interrupts/ask`, { answers: { q1: 'teal' } });
    expect(ok.status).toBe(200);
    const snap = await api.until(body.runId, terminal);
    expect(snap.status).toBe('completed');
    expect(snap.nodeStates.ask.outputs.answers).toEqual({ q1: 'teal' });
    expect(logProblems(await api.events(body.runId))).toEqual([]);
  });

  it('conformance-interrupt-parent-child-cancel: the cancel cascades to the suspended child; its gate is gone', async () => {
    const { body } = await api.post('/v1/runs', { workflowId: 'conformance-interrupt-parent-child-cancel' });
    const parent = body.runId as string;
    // While the child's gate is open the parent reads waiting-approval and names the child.
    const waiting = await api.until(parent, (s) => s.status === 'waiting-approval' || terminal(s));
    expect(waiting.status).toBe('waiting-approval');
    const childId = waiting.childRuns?.[0]?.runId as string;
    expect(waiting.childRuns).toEqual([
      expect.objectContaining({
        runId: childId,
        workflowId: 'conformance-interrupt-parent-child-cancel-child',
        status: 'waiting-approval',
      }),
    ]);
    const cancel = await api.post(`/v1/runs/${parent}/cancel`, { reason: 'conformance-test-cascade' });
    expect(cancel.status).toBeGreaterThanOrEqual(200);
    expect(cancel.status).toBeLessThan(300);
    expect((await api.until(parent, terminal)).status).toBe('cancelled');
    expect((await api.until(childId, terminal)).status).toBe('cancelled');
    const childEnd = (await api.events(childId)).at(-1)!;
    expect(childEnd.type).toBe('run.cancelled');
    expect(childEnd.payload).toMatchObject({ reason: 'parent-cancelled', parentRunId: parent });
    const parentEnd = (await api.events(parent)).at(-1)!;
    expect(parentEnd.payload.parentRunId).toBeUndefined();
    const late = await api.post(`/v1/runs/${childId}/interrupts/child-gate`, { resumeValue: { action: 'accept' } });
    expect([late.status, late.body.error]).toEqual([410, 'interrupt_gone']);
  });

  it('conformance-cap-breach: recursionLimit 3 fails the run with one cap.breached before the 4th node', async () => {
    const limit = 3;
    const { status, body } = await api.post('/v1/runs', {
      workflowId: 'conformance-cap-breach',
      configurable: { recursionLimit: limit },
    });
    expect(status).toBe(201);
    const snap = await api.until(body.runId, terminal);
    expect(snap.status).toBe('failed');
    expect(snap.error.code).toBe('recursion_limit_exceeded');
    expect(typeof snap.error.message).toBe('string');
    const events = await api.events(body.runId);
    expect(logProblems(events)).toEqual([]);
    const breaches = events.filter((e) => e.type === 'cap.breached');
    expect(breaches).toHaveLength(1);
    const p = breaches[0]!.payload as Record<string, any>;
    expect([p.kind, p.limit, typeof p.nodeId]).toEqual(['node-executions', limit, 'string']);
    expect(p.observed).toBeGreaterThan(limit);
    const failed = events.find((e) => e.type === 'run.failed')!;
    expect(breaches[0]!.sequence).toBeLessThan(failed.sequence);
    const started = events.filter((e) => e.type === 'node.started');
    expect(started.length).toBeGreaterThan(0);
    expect(started.length).toBeLessThanOrEqual(limit);
    expect(started.map((e) => e.nodeId)).not.toContain(p.nodeId);
  });

  it('version-fold is advertised; quorum and channel-ttl are not; X-Force-Engine-Version needs the test seams', async () => {
    const doc = (await api.get('/.well-known/openwop')).body;
    expect(doc.fixtures).toEqual(expect.arrayContaining(['conformance-cap-breach', 'conformance-version-fold']));
    expect(doc.fixtures).not.toContain('conformance-interrupt-quorum');
    expect(doc.fixtures).not.toContain('conformance-channel-ttl');
    expect(doc.testing).toBeUndefined();
    const forced = await api.post(
      '/v1/runs',
      { workflowId: 'conformance-version-fold' },
      { 'x-force-engine-version': String(doc.engineVersion) },
    );
    expect([forced.status, forced.body.error]).toEqual([403, 'force_engine_version_forbidden']);
    const quorum = await client(srv.url, await makeToken(h.location, 'operator', 'quorum-op')).post('/v1/workflows', {
      id: `quorum-${backend.name}`,
      name: 'quorum',
      version: '1.0',
      nodes: [
        {
          id: 'gate',
          typeId: 'core.approvalGate',
          name: 'Gate',
          position: { x: 0, y: 0 },
          config: { requiredApprovals: 3, rejectionPolicy: 'majority' },
          inputs: {},
        },
      ],
      edges: [],
      triggers: [],
      variables: [],
      metadata: {},
      settings: {},
    });
    expect([quorum.status, quorum.body.error]).toEqual([400, 'validation_error']);
    expect(JSON.stringify(quorum.body.details)).toContain('/nodes/0/config/requiredApprovals');
  });
});
