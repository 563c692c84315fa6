// Guarantees (OpenWOP v2 runs.md §Fork, identity.md §1.3, versioning.md §5), over real HTTP against `mhs-host serve`
// on SQLite and, when MHS_TEST_PG_URL is set, PostgreSQL, under OpenWOP-Version 2: a run created through /v1/ is
// forked through `POST /runs/{runId}:fork`, answering 201 {runId, sourceRunId, fromSeq, mode, status, eventsUrl}
// with bound ids; the fork runs to its end and its owner is the source's, copied verbatim even when another token
// forks it; a fromSeq outside the source log is 422 fork_point_invalid, a replay with an overlay and a branch
// without fromSeq are 400 validation_error, an unknown source is 404; an Idempotency-Key replay is the same fork, and
// a key outside the v2 grammar is 400 idempotency_key_invalid.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../../ledger/helpers.js';
import type { StoreHandle } from '../../ledger/helpers.js';
import { makeToken, serve } from '../../server/serve-helpers.js';
import type { Served } from '../../server/serve-helpers.js';
import { call, pollToEnd, v2Problems } from './v2-kit.js';

describe.each(BACKENDS)('v2 fork on $name', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let creator: string;
  let forker: string;
  let source: { v1Id: string; v2Id: string; lastSequence: number };

  beforeAll(async () => {
    h = await backend.fresh();
    creator = await makeToken(h.location, 'client', 'creator');
    forker = await makeToken(h.location, 'operator', 'forker');
    srv = await serve(h.location, ['--openwop-v2']);
    const v1 = await call(srv.url, 'POST', '/v1/runs', { token: creator, body: { workflowId: 'conformance-noop' } });
    const v2 = await call(srv.url, 'GET', `/runs/${v1.body.runId}`, { token: creator, version: '2' });
    const { last } = await pollToEnd(srv.url, `/runs/${encodeURIComponent(v2.body.runId)}/events`, creator);
    source = { v1Id: v1.body.runId, v2Id: v2.body.runId, lastSequence: last.lastSequence };
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
  });

  const fork = (body: unknown, token = forker, id = encodeURIComponent(source.v2Id)) =>
    call(srv.url, 'POST', `/runs/${id}:fork`, { token, version: '2', body });

  it('forks a v1-created run through the v2 path; the fork completes and keeps the source owner', async () => {
    const r = await fork({ mode: 'replay' });
    expect(r.status).toBe(201);
    expect(r.headers.get('openwop-version')).toBe('2.0');
    expect(r.body).toMatchObject({ sourceRunId: source.v2Id, mode: 'replay', fromSeq: 0 });
    expect(v2Problems('ids#/$defs/runId', r.body.runId)).toEqual([]);
    expect(r.body.runId).not.toBe(source.v2Id);
    const { last } = await pollToEnd(srv.url, r.body.eventsUrl, forker);
    expect(last.status).toBe('completed');
    const child = await call(srv.url, 'GET', `/runs/${encodeURIComponent(r.body.runId)}`, {
      token: forker,
      version: '2',
    });
    const parent = await call(srv.url, 'GET', `/runs/${encodeURIComponent(source.v2Id)}`, {
      token: creator,
      version: '2',
    });
    expect(child.body.owner).toEqual(parent.body.owner);
  });

  it('a branch from a point inside the log is accepted; the bare v1 id names the same source', async () => {
    const r = await fork({ mode: 'branch', fromSeq: 1, runOptionsOverlay: { tags: ['b'] } }, forker, source.v1Id);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ sourceRunId: source.v2Id, mode: 'branch', fromSeq: 1 });
    await pollToEnd(srv.url, r.body.eventsUrl, forker);
  });

  it('Idempotency-Key: a replayed fork is the same fork, marked; a key outside the grammar is 400 idempotency_key_invalid', async () => {
    const id = encodeURIComponent(source.v2Id);
    const withKey = (key: string) =>
      call(srv.url, 'POST', `/runs/${id}:fork`, {
        token: forker,
        version: '2',
        body: { mode: 'replay' },
        headers: { 'idempotency-key': key },
      });
    const bad = await withKey('too-short');
    expect([bad.status, bad.body.error]).toEqual([400, 'idempotency_key_invalid']);
    const key = 'fork-key-0123456789abcdef';
    const a = await withKey(key);
    const b = await withKey(key);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.body.runId).toBe(a.body.runId);
    expect([a.headers.get('openwop-idempotent-replay'), b.headers.get('openwop-idempotent-replay')]).toEqual([
      null,
      'true',
    ]);
    await pollToEnd(srv.url, a.body.eventsUrl, forker);
  });

  it('refusals: fork point outside the log 422, bad bodies 400, unknown source 404, unknown action 404', async () => {
    const past = await fork({ mode: 'branch', fromSeq: source.lastSequence + 1 });
    expect([past.status, past.body.error]).toEqual([422, 'fork_point_invalid']);
    expect(v2Problems('error-envelope', past.body)).toEqual([]);
    for (const body of [
      { mode: 'replay', runOptionsOverlay: { tags: ['x'] } },
      { mode: 'branch' },
      { mode: 'rewind' },
      { mode: 'replay', extra: 1 },
    ]) {
      const r = await fork(body);
      expect([r.status, r.body.error], JSON.stringify(body)).toEqual([400, 'validation_error']);
    }
    const unknown = await fork({ mode: 'replay' }, forker, 'local~2Frun-01ARZ3NDEKTSV4RRFFQ69G5FAV');
    expect([unknown.status, unknown.body.error]).toEqual([404, 'not_found']);
    const action = await call(srv.url, 'POST', `/runs/${encodeURIComponent(source.v2Id)}:rewind`, {
      token: forker,
      version: '2',
      body: {},
    });
    expect(action.status).toBe(404);
  });
});
