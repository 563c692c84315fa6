// Guarantees RFC 0040 (multiAgent.executionModel version 3) across two real `mhs-host serve` processes on separate
// SQLite files: host A's run starts a run on host B over REST (mhs.remoteRun: metadata.causation + traceparent);
// B's run.started carries causationId (A's event) and causationHostId (A's advertised hostId); both runs are in the
// caller's trace; B's ancestry endpoint names A's run and A's discovery URL, and A's names no parent; host ids are
// stable across restarts; malformed links and run ids are validation_error (a malformed traceparent is ignored, as W3C says), unknown runs not_found.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are read loosely in assertions */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openwopSchemas, schemaId } from '../../src/openwop/schemas.js';
import { client, logProblems, makeToken, serve, tempDb } from '../server/serve-helpers.js';
import type { Served } from '../server/serve-helpers.js';
import { oneNode } from './service-test-kit.js';

const terminal = (s: Record<string, unknown>) => ['completed', 'failed', 'cancelled'].includes(s.status as string);
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_TP = `00-${TRACE}-00f067aa0ba902b7-01`;
const traceId = (tp: string) => tp.split('-')[1];

const B_ID = 'lab-b.example/mhs-host';
let dbA: string;
let A: Served | undefined;
let B: Served | undefined;
let a: ReturnType<typeof client>;
let b: ReturnType<typeof client>;
/** Operators' clients of A and B: registering a workflow is an operator action (issue 20). */
let opsA: ReturnType<typeof client>;
let opsB: ReturnType<typeof client>;
let hostA: string;

async function startA(): Promise<void> {
  A = await serve(dbA, ['--no-mhs', '--no-workflows', '--peers', join(dirname(dbA), 'peers.json')]);
  a = client(A.url, await makeToken(dbA, 'client', `a-${Math.random()}`));
  opsA = client(A.url, await makeToken(dbA, 'operator', `op-a-${Math.random()}`));
  hostA = (await a.get('/.well-known/openwop')).body.multiAgent.executionModel.crossHostCausation.hostId;
}

beforeAll(async () => {
  const dbB = tempDb();
  const tokB = await makeToken(dbB, 'client');
  B = await serve(dbB, ['--no-mhs', '--no-workflows', '--host-id', B_ID]);
  b = client(B.url, tokB);
  opsB = client(B.url, await makeToken(dbB, 'operator', 'op-b'));
  dbA = tempDb();
  writeFileSync(join(dirname(dbA), 'peers.json'), JSON.stringify({ b: { url: B.url, token: tokB } }));
  await startA();
  expect((await opsB.post('/v1/workflows', oneNode('remote-child', { id: 'work', typeId: 'core.noop' }))).status).toBe(
    201,
  );
  const cause = oneNode('cause-remote', {
    id: 'call',
    typeId: 'mhs.remoteRun',
    config: { peer: 'b', workflowId: 'remote-child' },
  });
  expect((await opsA.post('/v1/workflows', cause)).status).toBe(201);
  const missing = oneNode('cause-missing', {
    id: 'call',
    typeId: 'mhs.remoteRun',
    config: { peer: 'b', workflowId: 'nope' },
  });
  expect((await opsA.post('/v1/workflows', missing)).status).toBe(201);
}, 60_000);

afterAll(async () => {
  await Promise.all([A?.stop(), B?.stop()]);
});

describe('RFC 0040 cross-host causation between two served hosts', () => {
  it('both hosts advertise executionModel version 3 with crossHostCausation, and the documents validate', async () => {
    for (const [c, id] of [
      [a, hostA],
      [b, B_ID],
    ] as const) {
      const doc = (await c.get('/.well-known/openwop')).body;
      expect(openwopSchemas().check(schemaId('capabilities'), doc)).toEqual([]);
      expect(doc.multiAgent.executionModel).toMatchObject({
        supported: true,
        version: 3,
        crossHostCausation: { supported: true, hostId: id, ancestryEndpointSupported: true },
      });
    }
    expect(hostA).toMatch(/^mhs-host\//);
    const api = (await a.get('/v1/openapi.json')).body;
    expect(api.paths['/v1/runs/{runId}/ancestry'].get.operationId).toBe('getRunAncestry');
  });

  it("A's run starts a run on B: causationHostId and causationId on B's run.started, one trace, ancestry B → A", async () => {
    const started = await a.post('/v1/runs', { workflowId: 'cause-remote' }, { traceparent: CALLER_TP });
    expect(started.status).toBe(201);
    // A's run continues the caller's trace (W3C traceresponse names A's own run span).
    expect(traceId(started.headers.get('traceresponse')!)).toBe(TRACE);
    const aRun = started.body.runId as string;
    const aSnap = await a.until(aRun, terminal);
    expect(aSnap.status).toBe('completed');
    const aEvents = await a.events(aRun);
    expect(logProblems(aEvents)).toEqual([]);
    const requested = aEvents.find(
      (e) => e.type === 'log.appended' && e.payload.message === 'cross-host run requested',
    )!;
    const out = aEvents.find((e) => e.type === 'node.completed' && e.nodeId === 'call')!.payload.outputs as any;
    expect(traceId(out.traceparent)).toBe(TRACE);
    // B's run span is a child in the same trace (its traceresponse, as A received it), not A's span itself.
    expect(traceId(out.remoteTraceparent)).toBe(TRACE);
    expect(out.remoteTraceparent).not.toBe(out.traceparent);

    const bRun = out.remoteRunId as string;
    expect((await b.until(bRun, terminal)).status).toBe('completed');
    const bEvents = await b.events(bRun);
    expect(logProblems(bEvents)).toEqual([]);
    const bStarted = bEvents[0]!;
    expect(bStarted.type).toBe('run.started');
    expect(bStarted.causationId).toBe(requested.eventId);
    expect(bStarted.payload.causationHostId).toBe(hostA);
    expect(bStarted.payload.causationHostId).not.toBe(B_ID);
    // Only the event whose cause is on A carries causationHostId.
    expect(bEvents.slice(1).filter((e) => 'causationHostId' in e.payload)).toEqual([]);
    // A's own events: causes are local, so no causationHostId.
    expect(aEvents.filter((e) => 'causationHostId' in e.payload)).toEqual([]);

    const ancB = await b.get(`/v1/runs/${bRun}/ancestry`);
    expect(ancB.status).toBe(200);
    expect(ancB.body).toEqual({
      runId: bRun,
      hostId: B_ID,
      parent: {
        runId: aRun,
        hostId: hostA,
        cause: 'core.subWorkflow',
        wellKnownUrl: new URL('/.well-known/openwop', A!.url).href,
      },
    });
    // Walk one hop: the parent's discovery document names the same host, and A's run is top-level.
    const parentDoc = await fetch(ancB.body.parent.wellKnownUrl).then((r) => r.json() as Promise<any>);
    expect(parentDoc.multiAgent.executionModel.crossHostCausation.hostId).toBe(hostA);
    expect((await a.get(`/v1/runs/${aRun}/ancestry`)).body).toEqual({ runId: aRun, hostId: hostA, parent: null });
  });

  it('a same-host parent is named with cause core.dispatch or core.subWorkflow, hostId this host, no wellKnownUrl', async () => {
    const sub = oneNode('local-parent', {
      id: 'child',
      typeId: 'core.subWorkflow',
      config: { workflowId: 'remote-child' },
    });
    expect((await opsB.post('/v1/workflows', sub)).status).toBe(201);
    for (const [parentWf, childWf, cause] of [
      ['local-parent', 'remote-child', 'core.subWorkflow'],
      ['conformance-orchestrator-dispatch', 'conformance-noop', 'core.dispatch'],
    ] as const) {
      const parent = (await b.post('/v1/runs', { workflowId: parentWf })).body.runId as string;
      expect((await b.until(parent, terminal)).status).toBe('completed');
      const children = (await b.get(`/v1/runs?workflowId=${childWf}`)).body.runs as Array<{ runId: string }>;
      const found: Array<Record<string, any>> = [];
      for (const c of children) {
        const anc = (await b.get(`/v1/runs/${c.runId}/ancestry`)).body;
        if (anc.parent?.runId === parent) found.push(anc);
      }
      expect(found).toHaveLength(1);
      expect(found[0]!.parent).toEqual({ runId: parent, hostId: B_ID, cause });
      // A same-host cause carries no causationHostId.
      const childEvents = await b.events(found[0]!.runId);
      expect(childEvents.filter((e) => 'causationHostId' in e.payload)).toEqual([]);
    }
  });

  it('a peer that refuses the run fails the node with external_call_failed', async () => {
    const run = (await a.post('/v1/runs', { workflowId: 'cause-missing' })).body.runId as string;
    const snap = await a.until(run, terminal);
    expect(snap.status).toBe('failed');
    const failed = (await a.events(run)).find((e) => e.type === 'node.failed')!;
    expect((failed.payload.error as any).code).toBe('external_call_failed');
  });

  it('POST /v1/runs refuses malformed causation links with validation_error, starting nothing, and ignores a malformed traceparent', async () => {
    const before = (await b.get('/v1/runs?limit=200')).body.runs.length;
    const link = {
      parentRunId: 'run_x',
      hostId: 'elsewhere',
      eventId: 'evt_1',
      wellKnownUrl: 'http://h/.well-known/openwop',
    };
    const bad: Array<[Record<string, unknown>, Record<string, string>]> = [
      [{ causation: { ...link, eventId: undefined } }, {}],
      [{ causation: { ...link, wellKnownUrl: undefined } }, {}],
      [{ causation: { ...link, wellKnownUrl: 'ftp://h/x' } }, {}],
      [{ causation: { ...link, cause: 'carrier-pigeon' } }, {}],
      [{ causation: { ...link, hostId: '' } }, {}],
      [{ causation: 'run_x' }, {}],
    ];
    for (const [metadata, headers] of bad) {
      const r = await b.post('/v1/runs', { workflowId: 'remote-child', metadata }, headers);
      expect([r.status, r.body.error]).toEqual([400, 'validation_error']);
    }
    expect((await b.get('/v1/runs?limit=200')).body.runs.length).toBe(before);
    // W3C Trace Context: a malformed traceparent is ignored, not refused; the run starts in a trace of its own.
    for (const tp of ['not-a-traceparent', `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`]) {
      const r = await b.post('/v1/runs', { workflowId: 'remote-child' }, { traceparent: tp });
      expect(r.status).toBe(201);
      const own = r.headers.get('traceresponse')!;
      expect(own).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/);
      expect(traceId(own)).not.toBe('0'.repeat(32));
    }
    // A direct caller's trace is continued too (traceresponse in the caller's trace).
    const ok = await b.post(
      '/v1/runs',
      { workflowId: 'remote-child', metadata: { causation: link } },
      {
        traceparent: CALLER_TP,
      },
    );
    expect(ok.status).toBe(201);
    expect(traceId(ok.headers.get('traceresponse')!)).toBe(TRACE);
  });

  it('the ancestry endpoint answers not_found for an unknown run and validation_error for a malformed id', async () => {
    const unknown = await b.get('/v1/runs/run_nope/ancestry');
    expect([unknown.status, unknown.body.error]).toEqual([404, 'not_found']);
    const spaced = await b.get('/v1/runs/run%20x/ancestry');
    expect([spaced.status, spaced.body.error]).toEqual([400, 'validation_error']);
  });

  it('the generated host id is kept in the store: the same after a restart', async () => {
    const before = hostA;
    await A!.stop();
    A = undefined;
    await startA();
    expect(hostA).toBe(before);
  }, 30_000);
});
