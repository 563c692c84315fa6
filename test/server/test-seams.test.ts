// Guarantees (host-sample-test-seams.md: conformance-only seams are off in production), on a real SQLite file:
// an app built without `testSeams` answers 404 with the usual not-found envelope on every `/v1/host/sample/*`
// seam, even to a valid token, and its OpenAPI document does not list them; with `testSeams: true` the same
// requests reach the seams (and they still need a token; the variables seam answers 404 for an unknown run, its
// other refusals and the fixture it serves are in test/openwop/subworkflow-mid-run-mutation.test.ts). Over a real `mhs-host serve` process,
// `--enable-test-seams` (or OPENWOP_TEST_SEAM_ENABLED=true) turns them on and says so on stderr, and the event-log seam
// `GET /v1/host/sample/test/runs/{runId}/events` answers the run's stored log filtered by type / nodeId / causationId
// (404 for an unknown run); without either the
// seams answer 404 (test/server/rest.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenStore } from '../../src/policy/tokens.js';
import { buildApp } from '../../src/server/app.js';
import { TEST_SEAM_PATHS } from '../../src/server/test-seam-routes.js';
import { ScriptedProvider } from '../../src/ai/scripted-provider.js';
import { createAiEnvelopeFamily } from '../../src/openwop/services/ai-envelope-family.js';
import { HostFixture, clock } from '../openwop/service-test-kit.js';
import { client, makeToken, serve, tempDb } from './serve-helpers.js';
import type { Served } from './serve-helpers.js';

type App = Awaited<ReturnType<typeof buildApp>>['app'];

/** One request per seam: the method, the URL, a body the seam accepts. */
const SEAMS = [
  { method: 'GET' as const, url: '/v1/host/sample/replay/effect-count?runId=run_x', path: TEST_SEAM_PATHS[0] },
  {
    method: 'POST' as const,
    url: '/v1/host/sample/test/mock-ai/program',
    path: TEST_SEAM_PATHS[1],
    payload: { nodeId: 'seams-probe', program: [] },
  },
  {
    method: 'POST' as const,
    url: '/v1/host/sample/test/runs/run_x/variables',
    path: TEST_SEAM_PATHS[2],
    payload: { variables: { v: 'x' } },
  },
  { method: 'GET' as const, url: '/v1/host/sample/test/runs/run_x/events', path: TEST_SEAM_PATHS[3] },
  {
    method: 'POST' as const,
    url: '/v1/host/sample/test/llm-cache-key',
    path: TEST_SEAM_PATHS[4],
    payload: { provider: 'openai', model: 'gpt-4', messages: [{ role: 'user', content: 'probe' }] },
  },
  {
    method: 'POST' as const,
    url: '/v1/host/sample/test/capability-toggle',
    path: TEST_SEAM_PATHS[5],
    payload: { name: '__probe__', value: null },
  },
  {
    method: 'POST' as const,
    url: '/v1/host/sample/workflows',
    path: TEST_SEAM_PATHS[6],
    payload: { workflowId: 'seams-probe', nodes: [{ nodeId: 'n', typeId: 'core.noop' }] },
  },
  {
    method: 'POST' as const,
    url: '/v1/host/sample/envelope/accept',
    path: TEST_SEAM_PATHS[7],
    payload: { envelope: {} },
  },
];

const fx = new HostFixture(() => Promise.resolve({}));
let off: App;
let on: App;
let auth: Record<string, string>;

beforeAll(async () => {
  const host = await fx.open();
  const tokens = createTokenStore(fx.db, clock);
  auth = { authorization: `Bearer ${(await tokens.add('seams', 'client')).token}` };
  ({ app: off } = await buildApp({ host, auth: tokens, clock }));
  // The envelope/accept seam is served only where the aiEnvelope family is installed.
  const families = [createAiEnvelopeFamily({ model: new ScriptedProvider({ turns: [] }) })];
  ({ app: on } = await buildApp({ host, auth: tokens, clock, testSeams: true, families }));
});

afterAll(async () => {
  await Promise.all([off.close(), on.close()]);
  await fx.close();
});

describe('test seams over inject', () => {
  it('are not served by default: 404 not_found on each seam, and the OpenAPI document omits them', async () => {
    expect(SEAMS.map((s) => s.path).sort()).toEqual([...TEST_SEAM_PATHS].sort());
    for (const s of SEAMS) {
      const res = await off.inject({
        method: s.method,
        url: s.url,
        headers: auth,
        ...(s.payload ? { payload: s.payload } : {}),
      });
      expect(res.statusCode, s.url).toBe(404);
      expect(res.json()).toEqual({ error: 'not_found', message: `no route ${s.method} ${s.url.split('?')[0]}` });
    }
    const paths = Object.keys((await off.inject({ method: 'GET', url: '/v1/openapi.json' })).json().paths as object);
    expect(paths).toContain('/v1/runs/{runId}:fork');
    expect(paths.filter((p) => p.startsWith('/v1/host/sample/'))).toEqual([]);
  });

  it('testSeams: true serves them (a token still required) and lists them in the OpenAPI document', async () => {
    const [count, program, variables, events] = SEAMS;
    const unknownRun = await on.inject({ method: count!.method, url: count!.url, headers: auth });
    expect(unknownRun.statusCode).toBe(404);
    expect(unknownRun.json()).toMatchObject({ error: 'not_found', details: { runId: 'run_x' } });
    const programmed = await on.inject({ method: 'POST', url: program!.url, headers: auth, payload: program!.payload });
    expect(programmed.statusCode).toBe(200);
    expect(programmed.json()).toEqual({ nodeId: 'seams-probe', entries: 0 });
    const noRun = await on.inject({ method: 'POST', url: variables!.url, headers: auth, payload: variables!.payload });
    expect(noRun.statusCode).toBe(404);
    expect(noRun.json()).toMatchObject({ error: 'not_found', details: { runId: 'run_x' } });
    const noLog = await on.inject({ method: 'GET', url: events!.url, headers: auth });
    expect(noLog.json()).toMatchObject({ error: 'not_found', details: { runId: 'run_x' } });
    for (const s of SEAMS)
      expect(
        (await on.inject({ method: s.method, url: s.url, ...(s.payload ? { payload: s.payload } : {}) })).statusCode,
      ).toBe(401);
    const paths = Object.keys((await on.inject({ method: 'GET', url: '/v1/openapi.json' })).json().paths as object);
    expect(paths).toEqual(expect.arrayContaining([...TEST_SEAM_PATHS]));
  });
});

describe('test seams over `mhs-host serve`', () => {
  const served: Served[] = [];
  afterAll(async () => {
    for (const s of served) expect(await s.stop()).toBe(0);
  });

  it.each<{ how: string; extra: string[]; env: Record<string, string> }>([
    { how: '--enable-test-seams', extra: ['--enable-test-seams'], env: {} },
    { how: 'OPENWOP_TEST_SEAM_ENABLED=true', extra: [], env: { OPENWOP_TEST_SEAM_ENABLED: 'true' } },
  ])(
    '$how turns the seams on',
    async ({ extra, env }) => {
      const db = tempDb();
      const token = await makeToken(db, 'client');
      const srv = await serve(db, ['--no-workflows', '--no-mhs', ...extra], env);
      served.push(srv);
      const api = client(srv.url, token);
      const programmed = await api.post('/v1/host/sample/test/mock-ai/program', { nodeId: 'served', program: [] });
      expect(programmed.status).toBe(200);
      expect(programmed.body).toEqual({ nodeId: 'served', entries: 0 });
      const count = await api.get('/v1/host/sample/replay/effect-count');
      expect(count.status).toBe(400);
      expect(count.body.error).toBe('validation_error');
      const variables = await api.post('/v1/host/sample/test/runs/run_x/variables', { variables: { v: 'x' } });
      expect(variables.status).toBe(404);
      expect(variables.body).toMatchObject({ error: 'not_found', details: { runId: 'run_x' } });
      // The event-log seam: the run's stored log, filtered by type / nodeId / causationId.
      const run = await api.post('/v1/runs', { workflowId: 'conformance-multi-node' });
      await api.until(run.body.runId, (x) => x.status === 'completed');
      const log = await api.events(run.body.runId);
      const all = await api.get(`/v1/host/sample/test/runs/${run.body.runId}/events`);
      expect([all.status, all.body.events]).toEqual([200, log]);
      const done = await api.get(`/v1/host/sample/test/runs/${run.body.runId}/events?type=node.completed&nodeId=b`);
      expect(done.body.events).toEqual(log.filter((e) => e.type === 'node.completed' && e.nodeId === 'b'));
      expect(done.body.events).toHaveLength(1);
      const caused = log.find((e) => e.causationId !== undefined)!;
      const byCause = await api.get(
        `/v1/host/sample/test/runs/${run.body.runId}/events?causationId=${caused.causationId}`,
      );
      expect(byCause.body.events).toEqual(log.filter((e) => e.causationId === caused.causationId));
      expect((await api.get('/v1/host/sample/test/runs/run_x/events')).status).toBe(404);
      expect(srv.output()).toContain('test seams enabled');
    },
    120_000,
  );
});
