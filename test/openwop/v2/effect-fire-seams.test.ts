// Guarantees (api/seams-v2.yaml `fireEffectSeam` and `forceEffectTransportRetry`; v2 idempotency.md §"Layer 2: effect
// identity" and §"Witness"; replay.md §"The effect-seam manifest", §Suppression; RFC 0173 §B, §C.2), over real HTTP
// against `mhs-host serve --enable-test-seams` on SQLite and, when MHS_TEST_PG_URL is set, PostgreSQL, with a real
// fixture provider on a loopback port:
// - forcing a transport retry sends one effect to the provider twice (the first connection cut after the request
//   arrived, the second answered), both attempts carrying the same Idempotency-Key; `GET /runs/{runId}/effects` lists
//   the effect the seam names as two attempt rows of that one id, each with that key as `providerKey`;
// - firing a manifest row runs it once inside a run: with a receiver, the receiver gets the effect once and the run's
//   ledger lists it; a replay fork of that run sends nothing to the receiver and its ledger is empty, while a branch
//   fork from before the effect re-fires it; without a receiver the effect goes to an unreachable destination and is
//   still in the ledger; a name that is no manifest row, or a body outside the published schema, is
//   `400 validation_error`; a row this host cannot fire from a seam is `404`;
// - without `--enable-test-seams` neither path is served.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are read loosely in assertions */
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, sqliteBackend } from '../../ledger/helpers.js';
import type { StoreHandle } from '../../ledger/helpers.js';
import { makeToken, serve } from '../../server/serve-helpers.js';
import type { Served } from '../../server/serve-helpers.js';
import { call, pollToEnd, v2Problems } from './v2-kit.js';

const FIRE = '/conformance/seams/sample/effect-seams/fire';
const RETRY = '/conformance/seams/sample/test/idempotency/effect-retry';
const enc = encodeURIComponent;

/** A fixture provider: records each request's Idempotency-Key; cuts the connection of the first `cut` requests. */
async function provider(cut: number): Promise<{ url: string; keys: string[]; close(): Promise<void> }> {
  const keys: string[] = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      keys.push(String(req.headers['idempotency-key'] ?? ''));
      if (keys.length <= cut) {
        req.socket.destroy();
        return;
      }
      res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ runId: 'received' }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/effects`,
    keys,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe.each(BACKENDS)('the v2 effect seams on $name', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let token: string;
  const v2 = (method: string, path: string, body?: unknown) =>
    call(srv.url, method, path, { token, version: '2.0', ...(body !== undefined ? { body } : {}) });
  const ledger = async (runId: string) => {
    const r = await v2('GET', `/runs/${enc(runId)}/effects`);
    expect(r.status).toBe(200);
    expect(v2Problems('effect-ledger-projection', r.body)).toEqual([]);
    return r.body.effects as any[];
  };
  const status = async (runId: string) => (await v2('GET', `/runs/${enc(runId)}`)).body.status;

  beforeAll(async () => {
    h = await backend.fresh();
    token = await makeToken(h.location, 'client');
    srv = await serve(h.location, ['--enable-test-seams']);
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
  });

  it('a forced transport retry presents one key on both attempts, and the ledger lists both under one effect', async () => {
    const p = await provider(1);
    try {
      const r = await v2('POST', RETRY, { providerUrl: p.url });
      expect(r.status).toBe(201);
      expect(Object.keys(r.body).sort()).toEqual(['effectId', 'runId']);
      expect(v2Problems('ids#/$defs/runId', r.body.runId)).toEqual([]);
      // The wire: two attempts, one key.
      expect(p.keys).toHaveLength(2);
      expect(p.keys[0]).not.toBe('');
      expect(p.keys[1]).toBe(p.keys[0]);
      // The ledger: the named effect, two attempts, the key the provider received on each.
      const rows = (await ledger(r.body.runId)).filter((e) => e.effectId === r.body.effectId);
      expect(rows.map((e) => e.attempt)).toEqual([1, 2]);
      expect(rows.map((e) => e.providerKey)).toEqual([p.keys[0], p.keys[0]]);
      expect(rows.map((e) => e.keying)).toEqual(['activity-recipe', 'activity-recipe']);
      expect(rows.map((e) => e.state)).toEqual(['released', 'completed']);
      expect(await status(r.body.runId)).toBe('completed');
    } finally {
      await p.close();
    }
  });

  it('a fired row runs once; a replay fork does not re-fire it, a branch fork from before it does', async () => {
    const p = await provider(0);
    try {
      const r = await v2('POST', FIRE, { seam: 'http.remote-run', receiverUrl: p.url });
      expect(r.status).toBe(201);
      expect(Object.keys(r.body)).toEqual(['runId']);
      expect(p.keys).toHaveLength(1);
      const parent = await ledger(r.body.runId);
      expect(parent).toHaveLength(1);
      expect(parent[0]).toMatchObject({ attempt: 1, state: 'completed', providerKey: p.keys[0] });

      const replay = await v2('POST', `/runs/${enc(r.body.runId)}:fork`, { mode: 'replay' });
      expect(replay.status).toBe(201);
      expect((await pollToEnd(srv.url, replay.body.eventsUrl, token)).last.status).toBe('completed');
      expect(await ledger(replay.body.runId)).toEqual([]);
      expect(p.keys).toHaveLength(1);

      const branch = await v2('POST', `/runs/${enc(r.body.runId)}:fork`, { mode: 'branch', fromSeq: 0 });
      expect(branch.status).toBe(201);
      expect((await pollToEnd(srv.url, branch.body.eventsUrl, token)).last.status).toBe('completed');
      expect(await ledger(branch.body.runId)).toHaveLength(1);
      expect(p.keys).toHaveLength(2);
      expect(await ledger(r.body.runId)).toEqual(parent);
    } finally {
      await p.close();
    }
  });

  it('without a receiver the fired effect goes to an unreachable destination and is still in the ledger', async () => {
    const r = await v2('POST', FIRE, { seam: 'http.remote-run' });
    expect(r.status).toBe(201);
    const rows = await ledger(r.body.runId);
    expect(rows.length).toBeGreaterThan(0);
    expect(new Set(rows.map((e) => e.effectId)).size).toBe(1);
    expect(await status(r.body.runId)).toBe('failed');
    const replay = await v2('POST', `/runs/${enc(r.body.runId)}:fork`, { mode: 'replay' });
    expect(replay.status).toBe(201);
    await pollToEnd(srv.url, replay.body.eventsUrl, token);
    expect((await ledger(replay.body.runId)).length).toBeLessThanOrEqual(rows.length);
    expect(await ledger(replay.body.runId)).toEqual([]);
  });

  it('refuses a name outside the manifest, a row it cannot fire, and bodies outside the published schema', async () => {
    const unknown = await v2('POST', FIRE, { seam: 'no.such-seam' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toBe('validation_error');
    expect(unknown.body.details.seams).toContain('http.remote-run');
    const mhs = await v2('POST', FIRE, { seam: 'mhs.governed-call' });
    expect(mhs.status).toBe(404);
    expect(mhs.body.details).toEqual({ seam: 'mhs.governed-call', fireable: ['http.remote-run'] });
    for (const [path, body] of [
      [FIRE, {}],
      [FIRE, { seam: 'http.remote-run', extra: 1 }],
      [FIRE, { seam: 'http.remote-run', receiverUrl: 'not a uri' }],
      [RETRY, {}],
      [RETRY, { providerUrl: 'not a uri' }],
    ] as const) {
      const r = await v2('POST', path, body);
      expect([r.status, r.body.error], JSON.stringify(body)).toEqual([400, 'validation_error']);
      expect(v2Problems('error-envelope', r.body)).toEqual([]);
    }
    // Authenticated like every seam.
    expect((await call(srv.url, 'POST', RETRY, { version: '2', body: { providerUrl: 'http://x/' } })).status).toBe(401);
  });
});

describe('without the test seams', () => {
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

  it('neither effect seam is served', async () => {
    for (const [path, body] of [
      [FIRE, { seam: 'http.remote-run' }],
      [RETRY, { providerUrl: 'http://127.0.0.1:1/' }],
    ] as const)
      expect((await call(srv.url, 'POST', path, { token, version: '2', body })).status).toBe(404);
  });
});
