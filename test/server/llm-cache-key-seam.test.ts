// Guarantees (host-sample-test-seams.md §4, RFC 0041 §A, recipe v2 of RFC 0150 §C; issue 17 item 2-3), over real HTTP
// on a listening host with a real SQLite store: `POST /v1/host/sample/test/llm-cache-key` answers every published
// vector's digest as `{cacheKey}`; transport-only fields do not change the key, seed/stop/maxOutputTokens and
// providerOptions do; a missing or malformed provider/model/messages answers 400 `invalid_argument`; a token is
// required; without test seams the route is unknown (404).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenStore } from '../../src/policy/tokens.js';
import { buildApp } from '../../src/server/app.js';
import { LLM_CACHE_KEY_SEAM_PATH } from '../../src/server/llm-cache-key-route.js';
import { HostFixture, clock } from '../openwop/service-test-kit.js';

type App = Awaited<ReturnType<typeof buildApp>>['app'];
interface Vector {
  id: string;
  input: Record<string, unknown>;
  digest: string;
}
const vectors = (
  JSON.parse(
    readFileSync(new URL('../../vendor/openwop/vectors/semantic-request-digest-v2.json', import.meta.url), 'utf8'),
  ) as { vectors: Vector[] }
).vectors;

const fx = new HostFixture(() => Promise.resolve({}));
const apps: App[] = [];
let on = '';
let off = '';
let token = '';

async function listen(testSeams: boolean): Promise<string> {
  const host = fx.host;
  const { app } = await buildApp({
    host,
    auth: createTokenStore(fx.db, clock),
    clock,
    ...(testSeams ? { testSeams } : {}),
  });
  apps.push(app);
  return app.listen({ port: 0, host: '127.0.0.1' });
}

beforeAll(async () => {
  await fx.open();
  token = (await createTokenStore(fx.db, clock).add('cache-key', 'client')).token;
  on = await listen(true);
  off = await listen(false);
});

afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
  await fx.close();
});

async function post(
  base: string,
  body: unknown,
  auth = true,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${base}${LLM_CACHE_KEY_SEAM_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

const base = { provider: 'openai', model: 'gpt-4', messages: [{ role: 'user', content: 'probe' }], temperature: 0.2 };

describe('the llm-cache-key seam', () => {
  it.each(vectors.map((v) => [v.id, v] as const))('answers vector %s', async (_id, v) => {
    expect(await post(on, v.input)).toEqual({ status: 200, json: { cacheKey: v.digest } });
  });

  it('ignores transport-only fields and keys the outcome-affecting ones', async () => {
    const key = (await post(on, base)).json.cacheKey;
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    const noisy = { ...base, stream: true, metadata: { a: 1 }, user: 'u', 'x-request-id': 'r', tenantId: 't' };
    expect((await post(on, noisy)).json.cacheKey).toBe(key);
    for (const extra of [{ seed: 42 }, { stop: ['STOP'] }, { maxOutputTokens: 100 }, { providerOptions: { x: 1 } }])
      expect((await post(on, { ...base, ...extra })).json.cacheKey).not.toBe(key);
  });

  it('answers 400 invalid_argument for a missing or malformed provider, model or messages', async () => {
    for (const body of [
      { model: 'm', messages: [] },
      { provider: 'p', messages: [] },
      { provider: 'p', model: 'm' },
      { provider: 'p', model: 'm', messages: [{ role: 'user' }] },
      [],
    ]) {
      const r = await post(on, body);
      expect([r.status, r.json.error]).toEqual([400, 'invalid_argument']);
    }
  });

  it('needs a token, and is not served without test seams', async () => {
    expect((await post(on, base, false)).status).toBe(401);
    const r = await post(off, base);
    expect([r.status, r.json.error]).toEqual([404, 'not_found']);
  });
});
