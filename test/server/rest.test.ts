// Guarantees (issue 7, over HTTP against a real `mhs-host serve` on a real SQLite file): fixtures run to
// completion with gap-free, ordered, schema-valid event logs ending in exactly one terminal event; JSON and
// SSE listings agree and SSE resumes after Last-Event-ID; long-poll returns new events and times out cleanly;
// cancel really stops a run; Idempotency-Key returns the same run; errors use the {error, message, details?}
// envelope (401, 404, 400 validation_error with paths, 409); the /v1/host/sample/* test seams answer 404 unless
// enabled; interrupts resolve through the REST route;
// sub-workflow children record parentRunId/parentNodeId.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of HTTP responses are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, logProblems, makeToken, readSse, serve, tempDb } from './serve-helpers.js';
import type { Served } from './serve-helpers.js';

let srv: Served;
let token: string;
let api: ReturnType<typeof client>;
/** An operator's client: registering a workflow is an operator action (issue 20). */
let ops: ReturnType<typeof client>;

beforeAll(async () => {
  const db = tempDb();
  token = await makeToken(db, 'client');
  srv = await serve(db, ['--no-workflows']);
  api = client(srv.url, token);
  ops = client(srv.url, await makeToken(db, 'operator', 'rest-op'));
}, 120_000);

afterAll(async () => {
  expect(await srv.stop()).toBe(0);
});

const terminal = (s: Record<string, any>) => ['completed', 'failed', 'cancelled'].includes(s.status as string);

describe('runs over REST', () => {
  it('conformance-noop completes; the log is gap-free, ordered, valid, with one terminal event last', async () => {
    const created = await api.post('/v1/runs', { workflowId: 'conformance-noop' });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`/v1/runs/${created.body.runId}`);
    const snap = await api.until(created.body.runId, terminal);
    expect(snap.status).toBe('completed');
    expect(snap.nodeStates.noop.status).toBe('completed');
    const events = await api.events(created.body.runId);
    expect(logProblems(events)).toEqual([]);
    expect(events.map((e) => e.type)).toEqual(['run.started', 'node.started', 'node.completed', 'run.completed']);
    expect(events[1]!.nodeId).toBe('noop');
    expect(events[2]!.causationId).toBeDefined();
  });

  it('JSON and SSE listings agree; SSE resumes after Last-Event-ID', async () => {
    const { body } = await api.post('/v1/runs', { workflowId: 'conformance-subworkflow-parent' });
    await api.until(body.runId, terminal);
    const json = await api.events(body.runId);
    const sse = await readSse(`${srv.url}/v1/runs/${body.runId}/events?streamMode=debug`, token);
    expect(sse.events).toEqual(json);
    expect(sse.ids).toEqual(json.map((e) => String(e.sequence)));
    const resumed = await readSse(`${srv.url}/v1/runs/${body.runId}/events?streamMode=debug`, token, {
      'last-event-id': '3',
    });
    expect(resumed.events).toEqual(json.slice(4));
  });

  it('SSE streams a live run to its terminal event with keep-alive comments', async () => {
    const { body } = await api.post('/v1/runs', { workflowId: 'conformance-approval' });
    const stream = readSse(`${srv.url}/v1/runs/${body.runId}/events?streamMode=debug`, token);
    await api.until(body.runId, (s) => s.status === 'waiting-approval');
    expect((await api.post(`/v1/runs/${body.runId}/interrupts/gate`, { action: 'accept' })).status).toBe(200);
    const got = await stream;
    expect(got.comments).toBeGreaterThanOrEqual(1); // the connect comment; keep-alives use the same frame
    expect(got.events).toEqual(await api.events(body.runId));
    expect(got.events.at(-1)!.type).toBe('run.completed');
  });

  it('long-poll returns new events, and times out cleanly when none come', async () => {
    const { body } = await api.post('/v1/runs', { workflowId: 'conformance-approval' });
    const snap = await api.until(body.runId, (s) => s.status === 'waiting-approval');
    const idle = await api.get(`/v1/runs/${body.runId}/events/poll?afterSequence=${snap.lastSequence}&timeout=300`);
    expect(idle.status).toBe(200);
    expect(idle.body).toMatchObject({ events: [], timedOut: true, lastSequence: snap.lastSequence });
    const waiting = api.get(`/v1/runs/${body.runId}/events/poll?afterSequence=${snap.lastSequence}&timeout=20000`);
    await api.post(`/v1/runs/${body.runId}/interrupts/gate`, { action: 'accept' });
    const got = await waiting;
    expect(got.body.timedOut).toBe(false);
    expect(got.body.events[0].sequence).toBe(snap.lastSequence + 1);
    expect(got.body.events[0].type).toBe('interrupt.resolved');
  });

  it('cancel stops a running run: the delay node is cancelled and run.cancelled is last', async () => {
    const { body } = await api.post('/v1/runs', { workflowId: 'conformance-dispatch-cancellable-child' });
    await api.until(body.runId, (s) => s.nodeStates.wait.status === 'running');
    const res = await api.post(`/v1/runs/${body.runId}/cancel`, { reason: 'test' });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('cancelled');
    const events = await api.events(body.runId);
    expect(logProblems(events)).toEqual([]);
    expect(events.map((e) => e.type).slice(-2)).toEqual(['node.cancelled', 'run.cancelled']);
    expect(events.at(-1)!.payload).toMatchObject({ reason: 'test' });
    const again = await api.post(`/v1/runs/${body.runId}/cancel`);
    expect(again.body.status).toBe('cancelled');
    const noop = await api.post('/v1/runs', { workflowId: 'conformance-noop' });
    await api.until(noop.body.runId, terminal);
    const late = await api.post(`/v1/runs/${noop.body.runId}/cancel`);
    expect([late.status, late.body.status]).toEqual([200, 'completed']);
  });

  it('Idempotency-Key returns the same run; the same key with another body is a conflict', async () => {
    const h = { 'idempotency-key': 'k-1' };
    const a = await api.post('/v1/runs', { workflowId: 'conformance-noop', tags: ['x'] }, h);
    const b = await api.post('/v1/runs', { workflowId: 'conformance-noop', tags: ['x'] }, h);
    expect(a.status).toBe(201);
    expect(b.status).toBe(200);
    expect(b.body.runId).toBe(a.body.runId);
    const c = await api.post('/v1/runs', { workflowId: 'conformance-noop', tags: ['y'] }, h);
    expect(c.status).toBe(409);
    expect(c.body.error).toBe('conflict');
  });

  it('resolves approval interrupts: reject routes over any_failed, loopback asks again with a new key', async () => {
    const routed = (await api.post('/v1/runs', { workflowId: 'conformance-approval-reject-routed' })).body
      .runId as string;
    await api.until(routed, (s) => s.status === 'waiting-approval');
    await api.post(`/v1/runs/${routed}/interrupts/gate`, { action: 'reject' });
    const r = await api.until(routed, terminal);
    expect(r.status).toBe('completed');
    expect([r.nodeStates['on-reject'].status, r.nodeStates['on-accept'].status]).toEqual(['completed', 'skipped']);

    const loop = (await api.post('/v1/runs', { workflowId: 'conformance-approval-reject-loopback' })).body
      .runId as string;
    await api.until(loop, (s) => s.status === 'waiting-approval');
    await api.post(`/v1/runs/${loop}/interrupts/gate`, { action: 'reject' });
    await api.until(loop, (s) => s.status === 'waiting-approval' && s.nodeStates.gate.executions === 2);
    await api.post(`/v1/runs/${loop}/interrupts/gate`, { action: 'accept' });
    expect((await api.until(loop, terminal)).status).toBe('completed');
    const keys = (await api.events(loop)).filter((e) => e.type === 'interrupt.requested').map((e) => e.payload.key);
    expect(keys).toHaveLength(2);
    expect(keys[0]).not.toBe(keys[1]);
  });

  it('edit-accept and refine resolve with their data (conformance-approval-edit-accept / -refine)', async () => {
    const edit = (await api.post('/v1/runs', { workflowId: 'conformance-approval-edit-accept' })).body.runId as string;
    await api.until(edit, (s) => s.status === 'waiting-approval');
    // The uniform envelope {resumeValue: {...}} is accepted for approvals too, and checked the same way.
    const bare = await api.post(`/v1/runs/${edit}/interrupts/gate`, { resumeValue: { action: 'edit-accept' } });
    expect([bare.status, bare.body.details.path]).toEqual([400, '/resumeValue/editedArtifactData']);
    const wrapped = await api.post(`/v1/runs/${edit}/interrupts/gate`, {
      resumeValue: { action: 'edit-accept', editedArtifactData: { title: 'v2' } },
    });
    expect(wrapped.status).toBe(200);
    const e = await api.until(edit, terminal);
    expect(e.nodeStates.gate.outputs).toMatchObject({ action: 'edit-accept', editedArtifactData: { title: 'v2' } });
    const refine = (await api.post('/v1/runs', { workflowId: 'conformance-approval-refine' })).body.runId as string;
    await api.until(refine, (s) => s.status === 'waiting-approval');
    const noFeedback = await api.post(`/v1/runs/${refine}/interrupts/gate`, { action: 'refine' });
    expect(noFeedback.body.details.path).toBe('/refineFeedback');
    await api.post(`/v1/runs/${refine}/interrupts/gate`, {
      action: 'refine',
      refineFeedback: { scope: 'whole', text: 'tighter' },
    });
    expect((await api.until(refine, terminal)).status).toBe('completed');
    const received = (await api.events(refine)).find((x) => x.type === 'approval.received')!;
    expect(received.payload).toMatchObject({ action: 'refine', refineFeedback: { scope: 'whole' } });
  });

  it('an approval timeout never grants: the gate fails approval_rejected and the run fails', async () => {
    const id = (await api.post('/v1/runs', { workflowId: 'conformance-approval-timeout-approve' })).body
      .runId as string;
    const s = await api.until(id, terminal);
    expect(s.status).toBe('failed');
    expect(s.error.code).toBe('approval_rejected');
    const events = await api.events(id);
    expect(logProblems(events)).toEqual([]);
    expect(events.find((e) => e.type === 'approval.received')!.payload.action).toBe('timeout');
  });

  it('sub-workflow fixtures run child runs that record parentRunId/parentNodeId; mappings apply', async () => {
    const parent = (await api.post('/v1/runs', { workflowId: 'conformance-subworkflow-parent' })).body.runId as string;
    const p = await api.until(parent, terminal);
    expect(p.status).toBe('completed');
    expect(p.variables.childOutcome).toBe('child-completed');
    const childRunId = p.nodeStates['subwf-call'].outputs.childRunId as string;
    const child = (await api.get(`/v1/runs/${childRunId}`)).body;
    expect(child).toMatchObject({ status: 'completed', parentRunId: parent, parentNodeId: 'subwf-call' });
    expect(logProblems(await api.events(childRunId))).toEqual([]);

    // inputMapping seeds the child once at dispatch (RFC 0022 §B); the child waits on its own gate.
    const mut = (await api.post('/v1/runs', { workflowId: 'conformance-subworkflow-mid-run-mutation' })).body
      .runId as string;
    await api.until(mut, (s) => s.nodeStates['subwf-call'].status === 'running' && s.lastSequence >= 2);
    const started = (await api.events(mut)).find(
      (e) => e.type === 'log.appended' && (e.payload.fields as { childRunId?: string } | undefined)?.childRunId,
    );
    const childId = (started!.payload.fields as { childRunId: string }).childRunId;
    const c = await api.until(childId, (s) => s.status === 'waiting-approval');
    expect(c).toMatchObject({ parentRunId: mut, parentNodeId: 'subwf-call', currentNodeId: 'child-gate' });
    expect(c.variables.receivedPrdId).toBe('seeded-id');
    await api.post(`/v1/runs/${childId}/interrupts/child-gate`, { action: 'accept' });
    expect((await api.until(mut, terminal)).status).toBe('completed');
    expect((await api.get(`/v1/runs/${childId}`)).body.status).toBe('completed');
  });

  it('cancelling a parent cancels its waiting child run', async () => {
    const mut = (await api.post('/v1/runs', { workflowId: 'conformance-subworkflow-mid-run-mutation' })).body
      .runId as string;
    await api.until(mut, (s) => s.lastSequence >= 2);
    const started = (await api.events(mut)).find(
      (e) => e.type === 'log.appended' && (e.payload.fields as { childRunId?: string } | undefined)?.childRunId,
    );
    const childId = (started!.payload.fields as { childRunId: string }).childRunId;
    await api.until(childId, (s) => s.status === 'waiting-approval');
    await api.post(`/v1/runs/${mut}/cancel`);
    expect((await api.until(mut, terminal)).status).toBe('cancelled');
    const child = await api.until(childId, terminal);
    expect(child.status).toBe('cancelled');
    const last = (await api.events(childId)).at(-1)!;
    expect(last.payload).toMatchObject({ parentRunId: mut, reason: 'parent-cancelled' });
  });
});

describe('errors use the envelope', () => {
  it('401 without or with a wrong token', async () => {
    const res = await fetch(`${srv.url}/v1/runs/run_x`);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: string }).error).toBe('unauthorized');
    expect((await client(srv.url, 'mhst_nope').get('/v1/runs/run_x')).body.error).toBe('unauthorized');
  });

  it('unknown run → 404 not_found', async () => {
    for (const path of [
      '/v1/runs/run_unknown',
      '/v1/runs/run_unknown/events',
      '/v1/runs/run_unknown/events/poll?timeout=0',
    ]) {
      const res = await api.get(path);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ error: 'not_found' });
      expect(typeof res.body.message).toBe('string');
    }
    expect((await api.post('/v1/runs/run_unknown/interrupts/gate', { action: 'accept' })).status).toBe(404);
  });

  it('the conformance test seams are not served without --enable-test-seams: 404 not_found', async () => {
    const count = await api.get('/v1/host/sample/replay/effect-count?runId=run_x');
    const program = await api.post('/v1/host/sample/test/mock-ai/program', { nodeId: 'n', program: [] });
    expect([count.status, count.body]).toEqual([
      404,
      { error: 'not_found', message: 'no route GET /v1/host/sample/replay/effect-count' },
    ]);
    expect([program.status, program.body]).toEqual([
      404,
      { error: 'not_found', message: 'no route POST /v1/host/sample/test/mock-ai/program' },
    ]);
    expect(srv.output()).not.toContain('test seams enabled');
  });

  it('bad bodies → 400 validation_error with details naming the path', async () => {
    const missing = await api.post('/v1/runs', {});
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe('validation_error');
    expect(missing.body.details.errors[0].path).toBe('/workflowId');
    const extra = await api.post('/v1/runs', { workflowId: 'conformance-noop', bogus: 1 });
    expect(extra.body.details.errors[0].path).toBe('/bogus');
    const notJson = await api.post('/v1/runs', '{nope');
    expect(notJson.status).toBe(400);
    expect(notJson.body.error).toBe('validation_error');
    const badWf = await ops.post('/v1/workflows', { id: 'Bad Id', name: 'x' });
    expect(badWf.status).toBe(400);
    expect(badWf.body.details.errors.map((e: { path: string }) => e.path)).toEqual(
      expect.arrayContaining(['/id', '/nodes']),
    );
    const unknownType = await ops.post('/v1/workflows', {
      id: 'uses-unknown',
      name: 'u',
      version: '1',
      nodes: [{ id: 'a', typeId: 'vendor.x.nothing', name: 'a', position: { x: 0, y: 0 }, config: {}, inputs: {} }],
      edges: [],
      triggers: [],
      variables: [],
      metadata: {},
      settings: {},
    });
    expect(unknownType.status).toBe(400);
    expect(unknownType.body.details.errors[0].path).toBe('/nodes/0/typeId');
    const badAction = (await api.post('/v1/runs', { workflowId: 'conformance-approval' })).body.runId as string;
    await api.until(badAction, (s) => s.status === 'waiting-approval');
    const r = await api.post(`/v1/runs/${badAction}/interrupts/gate`, {
      action: 'refine',
      refineFeedback: { scope: 'whole' },
    });
    expect(r.status).toBe(400);
    expect(r.body.details.path).toBe('/action');
    await api.post(`/v1/runs/${badAction}/cancel`);
  });

  it('registers a workflow through the API and runs it', async () => {
    const wf = {
      id: 'api-chain',
      name: 'API chain',
      version: '1',
      nodes: [
        {
          id: 'a',
          typeId: 'core.identity',
          name: 'a',
          position: { x: 0, y: 0 },
          config: {},
          inputs: { v: { type: 'variable', variableName: 'seed' } },
        },
        { id: 'b', typeId: 'core.noop', name: 'b', position: { x: 1, y: 0 }, config: {}, inputs: {} },
        { id: 'c', typeId: 'core.noop', name: 'c', position: { x: 1, y: 1 }, config: {}, inputs: {} },
      ],
      edges: [
        { id: 'ab', sourceNodeId: 'a', targetNodeId: 'b', condition: { type: 'equals', left: 'v', right: 7 } },
        { id: 'ac', sourceNodeId: 'a', targetNodeId: 'c', condition: { type: 'equals', left: 'v', right: 8 } },
      ],
      triggers: [{ id: 'manual', type: 'manual' }],
      variables: [{ name: 'seed', type: 'number', required: true }],
      metadata: {},
      settings: {},
    };
    expect((await ops.post('/v1/workflows', wf)).status).toBe(201);
    expect((await api.post('/v1/runs', { workflowId: 'api-chain' })).body.details.errors[0].path).toBe('/inputs/seed');
    const id = (await api.post('/v1/runs', { workflowId: 'api-chain', inputs: { seed: 7 } })).body.runId as string;
    const s = await api.until(id, terminal);
    expect(s.status).toBe('completed');
    expect([s.nodeStates.b.status, s.nodeStates.c.status]).toEqual(['completed', 'skipped']);
    expect((await api.get('/v1/workflows/api-chain')).body.id).toBe('api-chain');
  });
});
