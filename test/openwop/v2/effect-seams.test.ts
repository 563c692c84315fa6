// Guarantees (OpenWOP v2 replay.md §"The surface" and §"The effect-seam manifest", RFC 0140/0173; versioning.md §1.3),
// over real HTTP against `mhs-host serve` on SQLite and, when MHS_TEST_PG_URL is set, PostgreSQL: under
// OpenWOP-Version 2, `GET /host/effect-seams` answers the manifest valid against the vendored
// effect-seam-manifest schema, one guarded row for each outbound effect path of this host's node runtime; the exact
// manifest path negotiates like any unversioned path (no header → major 1 → 400, another major → 406) and needs a
// token; the v2 root advertises `replay` with the manifest path and validates against the vendored v2 capabilities
// schema; and the behaviour matches the claim: a replay fork through the v2 path does not re-fire the source's effect,
// a branch fork re-fires it (`branchReFires`).
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../../ledger/helpers.js';
import type { StoreHandle } from '../../ledger/helpers.js';
import { makeToken, serve } from '../../server/serve-helpers.js';
import type { Served } from '../../server/serve-helpers.js';
import { call, pollToEnd, v2Problems } from './v2-kit.js';

/** The engine id of a bound v2 run id (`local/run-01…` → `run_01…`), for the v1 effect-count seam. */
const engineId = (v2: string) => v2.replace(/^local\//, '').replace('-', '_');

describe.each(BACKENDS)('the v2 effect-seam manifest and replay record on $name', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let token: string;
  beforeAll(async () => {
    h = await backend.fresh();
    token = await makeToken(h.location, 'client');
    srv = await serve(h.location, ['--enable-test-seams']);
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
  });

  it('GET /host/effect-seams is the manifest: valid, every reachable seam listed, each guarded', async () => {
    const r = await call(srv.url, 'GET', '/host/effect-seams', { token, version: '2' });
    expect(r.status).toBe(200);
    expect(r.headers.get('openwop-version')).toBe('2.0');
    expect(v2Problems('effect-seam-manifest', r.body)).toEqual([]);
    expect(r.body).toMatchObject({
      manifestVersion: '1',
      host: { name: 'mhs-host', build: { kind: 'artifact-sha256' } },
    });
    expect(r.body.host.build.id).toMatch(/^[0-9a-f]{64}$/);
    expect(r.body.seams.map((s: any) => [s.seam, s.kind])).toEqual([
      ['mhs.governed-call', 'http'],
      ['mcp.client-call', 'http'],
      ['provider.model-call', 'provider-sdk'],
      ['http.remote-run', 'http'],
    ]);
    for (const s of r.body.seams) expect(s).toMatchObject({ guarded: true, branchReFires: true });
    // The build digest is computed once: a second read is the same document.
    expect((await call(srv.url, 'GET', '/host/effect-seams', { token, version: '2' })).body).toEqual(r.body);
  });

  it('the exact manifest path under /host negotiates and authenticates like any v2 operation', async () => {
    const none = await call(srv.url, 'GET', '/host/effect-seams', { token });
    expect(none.status).toBe(400);
    expect(none.body).toMatchObject({ error: 'validation_error', details: { v1Path: '/v1/host/effect-seams' } });
    const other = await call(srv.url, 'GET', '/host/effect-seams', { token, version: '3' });
    expect(other.status).toBe(406);
    expect(other.body.error).toBe('protocol_version_unsupported');
    const anon = await call(srv.url, 'GET', '/host/effect-seams', { version: '2' });
    expect(anon.status).toBe(401);
    expect(anon.body.error).toBe('unauthenticated');
    // The vendor namespace stays unnegotiated: a seam under /v1/host/sample answers with no version header.
    const seam = await call(srv.url, 'GET', '/v1/host/sample/replay/effect-count?runId=run_none', { token });
    expect(seam.headers.get('openwop-version')).toBeNull();
  });

  it('the v2 root advertises replay with the manifest path and validates; the OpenAPI document lists the manifest', async () => {
    const root = await call(srv.url, 'GET', '/.well-known/openwop', { version: '2' });
    expect(v2Problems('capabilities', root.body)).toEqual([]);
    expect(root.body.replay).toEqual({
      status: 'stable',
      since: '2.0',
      witness: 'witnessable-gated',
      modes: ['replay', 'branch'],
      effectSeamsManifest: '/host/effect-seams',
    });
    const api = await call(srv.url, 'GET', '/openapi.json', { version: '2' });
    expect(api.body.paths['/host/effect-seams']?.get?.operationId).toBe('getEffectSeamManifest');
    expect(api.body.paths['/runs/{runId}:fork']?.post?.operationId).toBe('forkRun');
  });

  it('a replay fork through the v2 path does not re-fire the source effect; a branch fork re-fires it', async () => {
    const count = async (v2Id: string) =>
      (await call(srv.url, 'GET', `/v1/host/sample/replay/effect-count?runId=${engineId(v2Id)}`, { token })).body
        .effectCount as number;
    const src = await call(srv.url, 'POST', '/runs', {
      token,
      version: '2',
      body: { workflowId: 'conformance-replay-effect' },
    });
    expect(src.status).toBe(201);
    expect((await pollToEnd(srv.url, src.body.eventsUrl, token)).last.status).toBe('completed');
    expect(await count(src.body.runId)).toBe(1);
    const id = encodeURIComponent(src.body.runId);
    const replay = await call(srv.url, 'POST', `/runs/${id}:fork`, { token, version: '2', body: { mode: 'replay' } });
    expect(replay.status).toBe(201);
    expect((await pollToEnd(srv.url, replay.body.eventsUrl, token)).last.status).toBe('completed');
    expect(await count(replay.body.runId)).toBe(0);
    const branch = await call(srv.url, 'POST', `/runs/${id}:fork`, {
      token,
      version: '2',
      body: { mode: 'branch', fromSeq: 1 },
    });
    expect(branch.status).toBe(201);
    expect((await pollToEnd(srv.url, branch.body.eventsUrl, token)).last.status).toBe('completed');
    expect(await count(branch.body.runId)).toBe(1);
    expect(await count(src.body.runId)).toBe(1);
  });
});
