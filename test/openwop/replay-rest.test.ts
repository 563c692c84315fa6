// Guarantees (replay.md §Endpoint, RFC 0140), over the real REST app on a real SQLite file: `POST /v1/runs/{runId}:fork`
// answers 201 with `{runId, sourceRunId, fromSeq, mode, status, eventsUrl}` and a Location; an Idempotency-Key replays
// the first fork (200, same runId); an unknown source is `not_found` (404); a bad body, a replay with an overlay, a
// branch without fromSeq is `validation_error` (400), a fromSeq past the source's log `fork_point_invalid` (422); no token is `unauthorized`;
// the effect-count seam answers `{runId, effectCount}`; both routes are in the OpenAPI document.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenStore } from '../../src/policy/tokens.js';
import { buildApp } from '../../src/server/app.js';
import { HostFixture, clock } from './service-test-kit.js';

const fx = new HostFixture(() => Promise.resolve({}));
let app: Awaited<ReturnType<typeof buildApp>>['app'];
let auth: Record<string, string>;
let source = '';

beforeAll(async () => {
  const host = await fx.open();
  const tokens = createTokenStore(fx.db, clock);
  auth = { authorization: `Bearer ${(await tokens.add('replay-rest', 'client')).token}` };
  ({ app } = await buildApp({ host, auth: tokens, clock, testSeams: true }));
  source = (await host.runs.createRun({ workflowId: 'conformance-replay-effect' }, { principal: 'replay-rest' })).run
    .runId;
  expect(await host.runs.waitTerminal(source)).toBe('completed');
});

afterAll(async () => {
  await app.close();
  await fx.close();
});

const fork = (runId: string, payload: unknown, headers: Record<string, string> = auth) =>
  app.inject({ method: 'POST', url: `/v1/runs/${runId}:fork`, headers, payload: payload as Record<string, unknown> });

describe('POST /v1/runs/{runId}:fork', () => {
  it('starts a replay fork: 201, the response shape and Location; the fork completes with no effect', async () => {
    const res = await fork(source, { mode: 'replay' });
    expect(res.statusCode).toBe(201);
    const body = res.json() as Record<string, unknown>;
    expect(body).toMatchObject({ sourceRunId: source, fromSeq: 0, mode: 'replay' });
    expect(typeof body.status).toBe('string');
    expect(body.eventsUrl).toBe(`/v1/runs/${String(body.runId)}/events`);
    expect(res.headers.location).toBe(`/v1/runs/${String(body.runId)}`);
    expect(await fx.host.runs.waitTerminal(body.runId as string)).toBe('completed');
    const seam = await app.inject({
      method: 'GET',
      url: `/v1/host/sample/replay/effect-count?runId=${String(body.runId)}`,
      headers: auth,
    });
    expect(seam.json()).toEqual({ runId: body.runId, effectCount: 0 });
  });

  it('replays the first fork for the same Idempotency-Key', async () => {
    const headers = { ...auth, 'idempotency-key': 'fork-key-1' };
    const a = await fork(source, { mode: 'replay' }, headers);
    const b = await fork(source, { mode: 'replay' }, headers);
    expect([a.statusCode, b.statusCode]).toEqual([201, 200]);
    expect((b.json() as { runId: string }).runId).toBe((a.json() as { runId: string }).runId);
    await fx.host.runs.waitTerminal((a.json() as { runId: string }).runId);
  });

  it('refuses with stable codes', async () => {
    const cases: Array<[string, unknown, number, string]> = [
      ['run_unknown', { mode: 'replay' }, 404, 'not_found'],
      [source, {}, 400, 'validation_error'],
      [source, { mode: 'rewind' }, 400, 'validation_error'],
      [source, { mode: 'replay', extra: 1 }, 400, 'validation_error'],
      [source, { mode: 'replay', fromSeq: -1 }, 400, 'validation_error'],
      [source, { mode: 'replay', fromSeq: 9999 }, 422, 'fork_point_invalid'],
      [source, { mode: 'replay', runOptionsOverlay: { tags: ['x'] } }, 400, 'validation_error'],
      [source, { mode: 'branch' }, 400, 'validation_error'],
    ];
    for (const [runId, body, status, code] of cases) {
      const res = await fork(runId, body);
      expect([res.statusCode, (res.json() as { error: string }).error], JSON.stringify(body)).toEqual([status, code]);
    }
    const anon = await fork(source, { mode: 'replay' }, {});
    expect([anon.statusCode, (anon.json() as { error: string }).error]).toEqual([401, 'unauthorized']);
    const other = await app.inject({ method: 'POST', url: `/v1/runs/${source}:rewind`, headers: auth, payload: {} });
    expect([other.statusCode, (other.json() as { error: string }).error]).toEqual([404, 'not_found']);
    const seam = await app.inject({ method: 'GET', url: '/v1/host/sample/replay/effect-count', headers: auth });
    expect((seam.json() as { error: string }).error).toBe('validation_error');
  });

  it('is described in the OpenAPI document', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json() as { paths: object };
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/v1/runs/{runId}:fork', '/v1/host/sample/replay/effect-count']),
    );
  });
});
