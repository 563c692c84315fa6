// Guarantees (OpenWOP v2 idempotency.md §"Layer 2" and §"Witness", runs.md §Surface gates, RFC 0173 §C.2), over real
// HTTP against `mhs-host serve` with a real simulator endpoint, on SQLite and, when MHS_TEST_PG_URL is set, PostgreSQL:
// under OpenWOP-Version 2, `GET /runs/{runId}/effects` answers the run's effect ledger, valid against the vendored
// effect-ledger-projection schema: one record per governed MHS command a node of the run journaled, with a
// tenant-bound `effectId` that a re-read names the same, `attempt` 1, `keying: activity-recipe`, the command id the
// endpoint received as `providerKey`, state `claimed` while the command is in flight and `completed` (the same
// effect) once its receipt is recorded, and nothing of the command's
// input or receipt; a run that sent no command reads `effects: []`; a run created under `/v1/` reads the same through
// v2; a replay fork's ledger is empty (its effect is suppressed) while a branch fork's holds a new effect of its own;
// an unknown run is `404`, another tenant's id `403 id_tenant_mismatch`; the route negotiates and authenticates like
// any v2 operation; and the v2 root advertises `idempotency` (valid, with the declared witness) while the route is
// served, and neither without the host ledger (`serve --no-mhs`).
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../../ledger/helpers.js';
import type { StoreHandle } from '../../ledger/helpers.js';
import { startMhsHost } from '../../helpers/mhs-host.js';
import type { MhsHost } from '../../helpers/mhs-host.js';
import { makeToken, serve } from '../../server/serve-helpers.js';
import type { Served } from '../../server/serve-helpers.js';
import { call, pollToEnd, v2Problems } from './v2-kit.js';

const NOTE = 'note-kept-in-the-receipt-only';

const wf = (id: string, endpoint: string): any => ({
  id,
  name: id,
  version: '1',
  nodes: [
    {
      id: 'warm',
      typeId: 'mhs.invoke',
      name: 'warm',
      position: { x: 0, y: 0 },
      config: {
        endpoint,
        device: 'thermostat',
        capability: 'cap.thermal.setpoint.v1',
        input: { setpoint_c: 31, operator_note: NOTE },
      },
      inputs: {},
    },
    { id: 'done', typeId: 'core.noop', name: 'done', position: { x: 1, y: 0 }, config: {}, inputs: {} },
  ],
  edges: [{ id: 'e0', sourceNodeId: 'warm', targetNodeId: 'done' }],
  triggers: [{ id: 'manual', type: 'manual' }],
  variables: [],
  metadata: {},
  settings: {},
});

describe.each(BACKENDS)('the v2 effect ledger (GET /runs/{runId}/effects) on $name', (backend) => {
  let h: StoreHandle;
  let host: MhsHost<'thermo' | 'conveyor'>;
  let srv: Served;
  let token: string;
  beforeAll(async () => {
    h = await backend.fresh();
    host = await startMhsHost({
      prefix: 'v2-effects',
      location: h.location,
      sims: { thermo: ['thermostat', ['--time-scale', '50']], conveyor: ['conveyor', ['--latency-ms', '1500']] },
      tokens: { client: 'client', op: 'operator' },
    });
    srv = host.srv!;
    token = host.tokens.client!;
    const reg = await call(srv.url, 'POST', '/v1/workflows', {
      token: host.tokens.op!,
      body: wf('v2-effects-warm', host.sims.thermo.endpointId),
    });
    expect(reg.status).toBe(201);
    const slow = wf('v2-effects-slow', host.sims.conveyor.endpointId);
    slow.nodes[0]!.config = {
      endpoint: host.sims.conveyor.endpointId,
      device: 'conveyor-workcell',
      capability: 'cap.world.step.v1',
      input: { ticks: 1 },
    };
    expect((await call(srv.url, 'POST', '/v1/workflows', { token: host.tokens.op!, body: slow })).status).toBe(201);
  }, 60_000);
  afterAll(async () => {
    await host?.stop();
    await h?.cleanup();
  });

  const effects = (statusUrl: string, o: { version?: string; as?: string } = {}) =>
    call(srv.url, 'GET', `${statusUrl}/effects`, { token: o.as ?? token, version: o.version ?? '2' });

  /** A v2 run of the workflow, run to its end: its create body and its v2 events. */
  async function completedRun(workflowId = 'v2-effects-warm'): Promise<{ run: any; events: any[] }> {
    const run = await call(srv.url, 'POST', '/runs', { token, version: '2', body: { workflowId } });
    expect(run.status).toBe(201);
    const { events, last } = await pollToEnd(srv.url, run.body.eventsUrl, token);
    expect(last.status).toBe('completed');
    return { run: run.body, events };
  }

  it('one completed record per governed command: valid, stable, the command id as provider key, content-free', async () => {
    const { run, events } = await completedRun();
    const r = await effects(run.statusUrl);
    expect(r.status).toBe(200);
    expect(r.headers.get('openwop-version')).toBe('2.0');
    expect(v2Problems('effect-ledger-projection', r.body)).toEqual([]);
    // The validator refuses something, so the check above is not vacuous.
    expect(v2Problems('effect-ledger-projection', { runId: 'x', effects: [{ nodeId: 'n' }] })).not.toEqual([]);
    expect(r.body.runId).toBe(run.runId);
    expect(r.body.effects).toHaveLength(1);
    const [e] = r.body.effects;
    // The command id has no seat in the closed v2 payloads (v2 reads project onto them); the v1 read carries it.
    expect(events.some((x: any) => x.nodeId === 'warm' && x.type === 'node.completed')).toBe(true);
    const engineId = String(run.runId).replace(/^local\/([a-z]+)-/, '$1_');
    const stored = (await call(srv.url, 'GET', `/v1/runs/${engineId}/events/poll?timeout=0`, { token })).body.events;
    const commandId = stored.find((x: any) => x.nodeId === 'warm' && x.payload?.commandId)?.payload.commandId;
    expect(commandId).toMatch(/^cmd_/);
    expect(e).toEqual({
      effectId: `local/${commandId.replace('_', '-')}`,
      nodeId: 'warm',
      attempt: 1,
      keying: 'activity-recipe',
      providerKey: commandId,
      state: 'completed',
      at: expect.any(String),
    });
    expect(Date.parse(e.at)).not.toBeNaN();
    // Neither the command's input nor its receipt reaches the projection.
    expect(r.text).not.toContain(NOTE);
    expect(r.text).not.toContain('setpoint');
    expect(r.text).not.toContain('temperature');
    // A re-read names the same effect.
    expect((await effects(run.statusUrl)).body).toEqual(r.body);
  });

  it('a run that sent no command reads an empty ledger; a v1-created run reads the same through v2', async () => {
    const { run } = await completedRun('conformance-noop');
    const none = await effects(run.statusUrl);
    expect(none.status).toBe(200);
    expect(none.body).toEqual({ runId: run.runId, effects: [] });
    expect(v2Problems('effect-ledger-projection', none.body)).toEqual([]);

    const v1 = await call(srv.url, 'POST', '/v1/runs', { token, body: { workflowId: 'v2-effects-warm' } });
    expect(v1.status).toBe(201);
    const v1Id = v1.body.runId as string;
    for (;;) {
      const s = await call(srv.url, 'GET', `/v1/runs/${v1Id}`, { token });
      if (s.body.status === 'completed') break;
      expect(['pending', 'running']).toContain(s.body.status);
      await new Promise((res) => setTimeout(res, 100));
    }
    const bare = await effects(`/runs/${v1Id}`);
    expect(bare.status).toBe(200);
    expect(bare.body.runId).toBe(`local/${v1Id.replace('_', '-')}`);
    expect(bare.body.effects).toMatchObject([{ nodeId: 'warm', state: 'completed', attempt: 1 }]);
    const bound = await effects(`/runs/${encodeURIComponent(bare.body.runId)}`);
    expect(bound.body).toEqual(bare.body);
  });

  it('a replay fork suppresses the effect (empty ledger); a branch fork records a new effect of its own', async () => {
    const { run } = await completedRun();
    const source = (await effects(run.statusUrl)).body.effects;
    expect(source).toHaveLength(1);
    const id = encodeURIComponent(run.runId);
    const replay = await call(srv.url, 'POST', `/runs/${id}:fork`, { token, version: '2', body: { mode: 'replay' } });
    expect(replay.status).toBe(201);
    expect((await pollToEnd(srv.url, replay.body.eventsUrl, token)).last.status).toBe('completed');
    const replayed = await effects(`/runs/${encodeURIComponent(replay.body.runId)}`);
    expect(replayed.status).toBe(200);
    expect(replayed.body).toEqual({ runId: replay.body.runId, effects: [] });
    const branch = await call(srv.url, 'POST', `/runs/${id}:fork`, {
      token,
      version: '2',
      body: { mode: 'branch', fromSeq: 1 },
    });
    expect(branch.status).toBe(201);
    expect((await pollToEnd(srv.url, branch.body.eventsUrl, token)).last.status).toBe('completed');
    const branched = (await effects(`/runs/${encodeURIComponent(branch.body.runId)}`)).body.effects;
    expect(branched).toMatchObject([{ nodeId: 'warm', state: 'completed' }]);
    expect(branched[0].effectId).not.toBe(source[0].effectId);
    // The source's ledger is unchanged by either fork.
    expect((await effects(run.statusUrl)).body.effects).toEqual(source);
  });

  it('a command in flight is a claimed record, the same effect completed once its receipt is recorded', async () => {
    const run = await call(srv.url, 'POST', '/runs', { token, version: '2', body: { workflowId: 'v2-effects-slow' } });
    expect(run.status).toBe(201);
    // The endpoint answers 1.5 s after the send: the first read that sees the journaled intent sees it unsettled.
    let seen: any[] = [];
    while (seen.length === 0) {
      const r = await effects(run.body.statusUrl);
      expect(r.status).toBe(200);
      expect(v2Problems('effect-ledger-projection', r.body)).toEqual([]);
      seen = r.body.effects;
      if (seen.length === 0) await new Promise((res) => setTimeout(res, 50));
    }
    expect(seen).toMatchObject([{ nodeId: 'warm', state: 'claimed', attempt: 1 }]);
    expect((await pollToEnd(srv.url, run.body.eventsUrl, token)).last.status).toBe('completed');
    const done = (await effects(run.body.statusUrl)).body.effects;
    expect(done).toMatchObject([{ effectId: seen[0].effectId, providerKey: seen[0].providerKey, state: 'completed' }]);
    expect(Date.parse(done[0].at)).toBeGreaterThanOrEqual(Date.parse(seen[0].at));
  });

  it('unknown run 404, another tenant 403, negotiation and authentication as any v2 operation', async () => {
    const ghost = await effects('/runs/local~2Frun-01HZZZZZZZZZZZZZZZZZZZZZZZ');
    expect([ghost.status, ghost.body.error]).toEqual([404, 'not_found']);
    const foreign = await effects(`/runs/${encodeURIComponent('other/run-01HZZZZZZZZZZZZZZZZZZZZZZZ')}`);
    expect([foreign.status, foreign.body.error]).toEqual([403, 'id_tenant_mismatch']);
    const { run } = await completedRun('conformance-noop');
    const v1 = await call(srv.url, 'GET', `${run.statusUrl}/effects`, { token });
    expect(v1.status).toBe(400);
    expect(v1.body.details?.v1Path).toMatch(/^\/v1\/runs\/.+\/effects$/);
    const anon = await call(srv.url, 'GET', `${run.statusUrl}/effects`, { version: '2' });
    expect([anon.status, anon.body.error]).toEqual([401, 'unauthenticated']);
  });

  it('the v2 root advertises idempotency while the route is served; the OpenAPI document lists getRunEffects', async () => {
    const root = await call(srv.url, 'GET', '/.well-known/openwop', { version: '2' });
    expect(v2Problems('capabilities', root.body)).toEqual([]);
    expect(root.body.idempotency).toEqual({
      status: 'stable',
      since: '2.0',
      witness: 'witnessable-gated',
      crossRegion: 'single-region',
    });
    // The replay record binds the fork and the manifest only (replay.md §"The surface"; the schema has no effects seat).
    expect(Object.keys(root.body.replay).sort()).toEqual(
      ['effectSeamsManifest', 'modes', 'since', 'status', 'witness'].sort(),
    );
    const api = await call(srv.url, 'GET', '/openapi.json', { version: '2' });
    expect(api.body.paths['/runs/{runId}/effects']?.get?.operationId).toBe('getRunEffects');
  });
});

describe('without the host ledger (serve --no-mhs)', () => {
  let h: StoreHandle;
  let srv: Served;
  let token: string;
  beforeAll(async () => {
    h = await BACKENDS[0]!.fresh();
    token = await makeToken(h.location, 'client');
    srv = await serve(h.location, ['--no-mhs']);
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
  });

  it('neither the route nor the idempotency record: the witness does not hold', async () => {
    const root = await call(srv.url, 'GET', '/.well-known/openwop', { version: '2' });
    expect(v2Problems('capabilities', root.body)).toEqual([]);
    expect(root.body).not.toHaveProperty('idempotency');
    const run = await call(srv.url, 'POST', '/runs', { token, version: '2', body: { workflowId: 'conformance-noop' } });
    expect(run.status).toBe(201);
    const r = await call(srv.url, 'GET', `${run.body.statusUrl}/effects`, { token, version: '2' });
    expect(r.status).toBe(404);
  });
});
