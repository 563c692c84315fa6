// Guarantees (OpenWOP v2 conformance.md §"The seams profile", RFC 0168 §C; api/seams-v2.yaml; RFC 0176 §A), over
// real HTTP against `mhs-host serve --enable-test-seams` on SQLite and, when MHS_TEST_PG_URL is set, PostgreSQL:
// the v2 root advertises the profile as `conformance.seamsProfile` (never a `testSeams` flag) and validates against
// the vendored v2 capabilities schema; every `/v1/host/sample/…` seam answers at its `/conformance/seams/sample/…`
// address under OpenWOP-Version 2 (bound v2 run ids, the v2 event projection, the v2 error envelope), negotiated and
// authenticated like any v2 operation; the era-2 event-log seed stores the given v1-vocabulary rows verbatim and the v2
// read translates them; such a run is forked through v2 with a byte-equivalent prefix and the legacy owner; a seeded
// row the codemap does not name fails the poll and the fork with `500 event_type_unmapped` (nothing forked); a seed
// outside the published schema is refused with nothing written. Without the seams none of it is served or advertised.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are read loosely in assertions */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, sqliteBackend } from '../../ledger/helpers.js';
import type { StoreHandle } from '../../ledger/helpers.js';
import { makeToken, serve } from '../../server/serve-helpers.js';
import type { Served } from '../../server/serve-helpers.js';
import { TEST_SEAM_PATHS } from '../../../src/server/test-seam-routes.js';
import { call, codemap, pollToEnd, v2EventProblems, v2Problems } from './v2-kit.js';

const SEED = '/conformance/seams/sample/event-log/seed';
const enc = encodeURIComponent;
const engineId = (v2: string) => v2.replace(/^local\//, '').replace('-', '_');

/** The scenarios' era-2 log (conformance lib/era2-seed.ts `v1FixtureLog`): two renamed rows between start and end. */
function v1Log(
  workflowId = 'conformance-noop',
): Array<{ type: string; sequence: number; payload: Record<string, unknown>; timestamp: string }> {
  const t0 = Date.parse('2026-01-15T10:00:00.000Z');
  const ts = (i: number) => new Date(t0 + i * 1000).toISOString();
  return [
    { type: 'run.started', sequence: 0, payload: { workflowId }, timestamp: ts(0) },
    {
      type: 'agent.toolCalled',
      sequence: 1,
      payload: { agentId: 'conformance-agent', toolName: 'echo', callId: 'call-0001' },
      timestamp: ts(1),
    },
    {
      type: 'agent.toolReturned',
      sequence: 2,
      payload: { agentId: 'conformance-agent', toolName: 'echo', callId: 'call-0001', status: 'ok' },
      timestamp: ts(2),
    },
    { type: 'run.completed', sequence: 3, payload: { durationMs: 3000 }, timestamp: ts(3) },
  ];
}

/** RFC 0041 §C observable part of an event: type, sequence, payload (clock fields and minted ids excluded). */
const observable = (e: any) => JSON.stringify({ type: e.type, sequence: e.sequence, payload: e.payload });

/** Every object key anywhere in a document. */
function keysOf(v: unknown, out: string[] = []): string[] {
  if (Array.isArray(v)) for (const x of v) keysOf(x, out);
  else if (v && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) {
      out.push(k);
      keysOf(x, out);
    }
  return out;
}

describe.each(BACKENDS)('the v2 conformance seams profile on $name', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let token: string;
  const v2 = (method: string, path: string, body?: unknown) =>
    call(srv.url, method, path, { token, version: '2.0', ...(body !== undefined ? { body } : {}) });

  beforeAll(async () => {
    h = await backend.fresh();
    token = await makeToken(h.location, 'client');
    // A scripted model installs the aiEnvelope family, so the envelope/accept seam is mounted too.
    const dir = mkdtempSync(join(tmpdir(), 'mhs-seams-v2-'));
    writeFileSync(join(dir, 'script.json'), JSON.stringify({ turns: [{ final: 'unused' }] }));
    srv = await serve(h.location, ['--enable-test-seams', '--ai-script', join(dir, 'script.json')]);
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
  });

  it('the v2 root advertises the profile in the conformance metadata key, validates, and has no testSeams flag', async () => {
    const root = await call(srv.url, 'GET', '/.well-known/openwop', { version: '2' });
    expect(root.status).toBe(200);
    expect(v2Problems('capabilities', root.body)).toEqual([]);
    expect(root.body.conformance.seamsProfile).toBe('openwop-conformance-seams-v2');
    expect(keysOf(root.body)).not.toContain('testSeams');
    expect(root.body.profiles).toBeUndefined();
    // The canonical v2 OpenAPI document carries no seam operation (conformance.md §The seams profile).
    const api = await call(srv.url, 'GET', '/openapi.json', { version: '2' });
    expect(Object.keys(api.body.paths).filter((p) => p.startsWith('/conformance/'))).toEqual([]);
  });

  it('every v1 seam answers at its /conformance/seams/sample address under major 2, negotiated and authenticated', async () => {
    for (const v1 of TEST_SEAM_PATHS) {
      const path = v1.replace('/v1/host/sample/', '/conformance/seams/sample/').replace('{runId}', 'local%2Frun-none');
      const method = /effect-count|runs\/\{runId\}\/events$/.test(v1) ? 'GET' : 'POST';
      const r = await call(srv.url, method, path, {
        token,
        version: '2.0',
        ...(method === 'POST' ? { body: {} } : {}),
      });
      // Mounted: an answer of the seam (a refusal of the empty body or unknown run), never the router's 404.
      expect([r.status, r.body?.message], path).not.toEqual([404, `no route ${method} ${path}`]);
      expect(r.headers.get('openwop-version'), path).toBe('2.0');
      if (r.status >= 400) expect(v2Problems('error-envelope', r.body), path).toEqual([]);
    }
    const none = await call(srv.url, 'POST', SEED, { token, body: {} });
    expect(none.status).toBe(400);
    expect(none.body).toMatchObject({
      error: 'validation_error',
      details: { v1Path: '/v1/host/sample/event-log/seed' },
    });
    const other = await call(srv.url, 'POST', SEED, { token, version: '3', body: {} });
    expect(other.status).toBe(406);
    expect(other.body.error).toBe('protocol_version_unsupported');
    const anon = await call(srv.url, 'POST', SEED, { version: '2', body: { eventLogSchemaVersion: 2 } });
    expect(anon.status).toBe(401);
    expect(anon.body.error).toBe('unauthenticated');
  });

  it('the v2 seams speak v2: bound run ids, the v2 event projection and filters, the v2 error envelope', async () => {
    const created = await v2('POST', '/runs', { workflowId: 'conformance-noop' });
    expect(created.status).toBe(201);
    const runId: string = created.body.runId;
    await pollToEnd(srv.url, created.body.eventsUrl, token);
    const all = await v2('GET', `/conformance/seams/sample/test/runs/${enc(runId)}/events`);
    expect(all.status).toBe(200);
    expect(all.body.events.length).toBeGreaterThan(1);
    for (const e of all.body.events) expect(v2EventProblems(e)).toEqual([]);
    expect(all.body.events.every((e: any) => e.runId === runId)).toBe(true);
    const done = await v2('GET', `/conformance/seams/sample/test/runs/${enc(runId)}/events?type=run.completed`);
    expect(done.body.events.map((e: any) => e.type)).toEqual(['run.completed']);
    const count = await v2('GET', `/conformance/seams/sample/replay/effect-count?runId=${enc(runId)}`);
    expect(count.body).toEqual({ runId, effectCount: 0 });
    // The same run through the v1 seam: engine ids and the stored log.
    const v1 = await call(srv.url, 'GET', `/v1/host/sample/test/runs/${engineId(runId)}/events`, { token });
    expect(v1.body.events[0].runId).toBe(engineId(runId));
    const unknown = await v2('GET', `/conformance/seams/sample/test/runs/${enc('local/run-none')}/events`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe('not_found');
    const bad = await v2('POST', '/conformance/seams/sample/test/llm-cache-key', { model: 1 });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('validation_error');
    expect(bad.body.details.hostCode).toBe('invalid_argument');
    expect(v2Problems('error-envelope', bad.body)).toEqual([]);
  });

  it('one capability overlay behind both majors: a toggle through the v2 seam is what the v1 seam reports', async () => {
    const set = await v2('POST', '/conformance/seams/sample/test/capability-toggle', {
      name: 'agents.dispatchMapping',
      value: false,
    });
    expect(set.status).toBe(200);
    const v1 = await call(srv.url, 'POST', '/v1/host/sample/test/capability-toggle', {
      token,
      body: { name: 'subWorkflow.inputMapping', value: true },
    });
    expect(v1.body.overlay).toMatchObject({ 'agents.dispatchMapping': false, 'subWorkflow.inputMapping': true });
    const reset = await v2('POST', '/conformance/seams/sample/test/capability-toggle', { reset: true });
    expect(reset.body).toEqual({ overlay: {}, reset: true });
  });

  it('the era-2 seed stores the v1 rows verbatim; the v2 read translates them and stamps the legacy owner', async () => {
    const log = v1Log();
    const s = await v2('POST', SEED, { eventLogSchemaVersion: 2, status: 'completed', events: log });
    expect(s.status).toBe(201);
    expect(Object.keys(s.body)).toEqual(['runId']);
    expect(v2Problems('ids#/$defs/runId', s.body.runId)).toEqual([]);
    const snap = await v2('GET', `/runs/${enc(s.body.runId)}`);
    expect(snap.status).toBe(200);
    expect(snap.body).toMatchObject({ status: 'completed', eventLogSchemaVersion: 2 });
    expect(snap.body.owner.subject.issuer).toBe('urn:openwop:legacy');
    const poll = await v2('GET', `/runs/${enc(s.body.runId)}/events/poll?timeout=1`);
    expect(poll.status).toBe(200);
    const map = codemap();
    expect(poll.body.events.map((e: any) => e.type)).toEqual(log.map((e) => map.get(e.type)));
    expect(poll.body.events.map((e: any) => e.type)).toContain('agent.tool-called');
    expect(poll.body.events.map((e: any) => e.sequence)).toEqual([0, 1, 2, 3]);
    expect(poll.body.events[1].payload).toEqual(log[1]!.payload);
    expect(poll.body.events[0].payload.owner.subject.issuer).toBe('urn:openwop:legacy');
    // Stored as given: the v1 read of the same run has the v1 type strings and timestamps.
    const stored = await call(srv.url, 'GET', `/v1/runs/${engineId(s.body.runId)}/events/poll?timeout=0`, {
      token,
    });
    expect(stored.body.events.map((e: any) => [e.type, e.timestamp])).toEqual(log.map((e) => [e.type, e.timestamp]));
  });

  it('a seeded era-2 run forks through v2: the prefix is byte-equivalent to the translated parent, owner legacy', async () => {
    const log = v1Log();
    const s = await v2('POST', SEED, { eventLogSchemaVersion: 2, status: 'completed', events: log });
    const parent = await v2('GET', `/runs/${enc(s.body.runId)}/events/poll?timeout=1`);
    const fork = await v2('POST', `/runs/${enc(s.body.runId)}:fork`, { mode: 'replay', fromSeq: 3 });
    expect(fork.status).toBe(201);
    const { events } = await pollToEnd(srv.url, fork.body.eventsUrl, token);
    const prefix = (es: any[]) => es.filter((e) => e.sequence < 3).map(observable);
    expect(prefix(events)).toHaveLength(3);
    expect(prefix(events)).toEqual(prefix(parent.body.events));
    const started = events.find((e: any) => e.type === 'run.started');
    expect(started.payload.owner.subject.issuer).toBe('urn:openwop:legacy');
  });

  it('a seeded row the codemap does not name fails the v2 read (poll and fork) with 500 event_type_unmapped', async () => {
    const log = v1Log();
    log.splice(1, 1, { type: 'foo.bar', sequence: 1, payload: {}, timestamp: log[1]!.timestamp });
    const s = await v2('POST', SEED, { eventLogSchemaVersion: 2, status: 'completed', events: log });
    expect(s.status).toBe(201);
    const poll = await v2('GET', `/runs/${enc(s.body.runId)}/events/poll?timeout=1`);
    expect(poll.status).toBe(500);
    expect(poll.body).toMatchObject({ error: 'event_type_unmapped', details: { type: 'foo.bar', sequence: 1 } });
    const before = await v2('GET', '/runs?limit=200');
    const fork = await v2('POST', `/runs/${enc(s.body.runId)}:fork`, { mode: 'replay', fromSeq: 3 });
    expect(fork.status).toBe(500);
    expect(fork.body).toMatchObject({ error: 'event_type_unmapped', details: { type: 'foo.bar', sequence: 1 } });
    expect(v2Problems('error-envelope', fork.body)).toEqual([]);
    // Refused before anything of the fork was written.
    expect((await v2('GET', '/runs?limit=200')).body.runs.length).toBe(before.body.runs.length);
    // A fork point below the unmapped row reads only mapped rows, so it forks.
    const early = await v2('POST', `/runs/${enc(s.body.runId)}:fork`, { mode: 'branch', fromSeq: 1 });
    expect(early.status).toBe(201);
  });

  it('a seed outside the published schema is refused with the path named, and nothing is written', async () => {
    const before = await v2('GET', '/runs?limit=200');
    const log = v1Log();
    const refused: Array<[unknown, string]> = [
      [{ eventLogSchemaVersion: 3, status: 'completed', events: log }, '/eventLogSchemaVersion'],
      [{ eventLogSchemaVersion: 2, status: 'paused', events: log }, '/status'],
      [{ eventLogSchemaVersion: 2, status: 'completed', events: [] }, '/events'],
      [{ eventLogSchemaVersion: 2, status: 'completed', events: [{ ...log[0], nodeId: 'n' }] }, '/events/0'],
      [{ eventLogSchemaVersion: 2, status: 'completed', events: [{ ...log[0], sequence: -1 }] }, '/events/0/sequence'],
      [
        { eventLogSchemaVersion: 2, status: 'completed', events: [log[0], { ...log[1], sequence: 0 }] },
        '/events/1/sequence',
      ],
      [{ eventLogSchemaVersion: 2, status: 'completed', events: log, owner: {} }, '/'],
    ];
    for (const [body, path] of refused) {
      const r = await v2('POST', SEED, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error).toBe('validation_error');
      expect(r.body.details.errors.map((e: any) => e.path)).toContain(path);
    }
    const after = await v2('GET', '/runs?limit=200');
    expect(after.body.runs.length).toBe(before.body.runs.length);
  });
});

describe('without --enable-test-seams on SQLite', () => {
  let h: StoreHandle;
  let srv: Served;
  let token: string;
  beforeAll(async () => {
    h = await sqliteBackend.fresh();
    token = await makeToken(h.location, 'client');
    srv = await serve(h.location);
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
  });

  it('no seam is served under /conformance/seams and the profile is not advertised', async () => {
    const root = await call(srv.url, 'GET', '/.well-known/openwop', { version: '2' });
    expect(root.body.conformance?.seamsProfile).toBeUndefined();
    expect(v2Problems('capabilities', root.body)).toEqual([]);
    const seed = await call(srv.url, 'POST', SEED, { token, version: '2', body: v1Log() });
    expect(seed.status).toBe(404);
    const headerless = await call(srv.url, 'POST', SEED, { token, body: {} });
    expect(headerless.status).toBe(404);
    const toggle = await call(srv.url, 'POST', '/conformance/seams/sample/test/capability-toggle', {
      token,
      version: '2',
      body: { reset: true },
    });
    expect(toggle.status).toBe(404);
  });
});
