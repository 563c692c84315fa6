// Guarantees (RFC 0028 Phase B, prompts.md §"Discovery & distribution"): a real `mhs-host serve --prompts DIR`
// serves /v1/prompts* over HTTP: the list (latest version of each template, filters kind/tag/modelClass/source,
// cursor paging that visits every template once), a fetch of the latest or a pinned version (ETag, 304), :render
// through the node composition (its hash equals the prompt.composed hash of a real run for the same bindings;
// contentTrust untrusted wraps each substituted value in <UNTRUSTED> markers and so changes the hash; a
// missing required variable is prompt_variable_unresolved; unknown ids are not_found; bad bodies validation_error;
// a body above library.maxRenderRequestBytes 413),
// and the mutable library: user templates are created, get new versions appended (prior ones stay pinned), and are
// deleted for good, while host templates answer 403; all of it survives a restart. The capabilities document
// advertises the surface and validates. Without --prompts every /v1/prompts* request answers 501
// capability_not_provided.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/core/index.js';
import { openwopSchemas, schemaId } from '../../src/openwop/schemas.js';
import { oneNode } from '../openwop/service-test-kit.js';
import { client, makeToken, serve, tempDb } from './serve-helpers.js';
import type { Served } from './serve-helpers.js';

const writer = (version: string, text: string) => ({
  templateId: 'acme.writer',
  version,
  kind: 'user',
  text,
  variables: [
    { name: 'name', type: 'string', required: true },
    { name: 'topic', type: 'string', required: false, defaultValue: 'things' },
  ],
  tags: ['editorial', 'letters'],
  modelHints: { modelClass: 'writing' },
});

function promptDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mhs-prompts-rest-'));
  const put = (f: string, v: unknown): void => writeFileSync(join(dir, f), JSON.stringify(v));
  put('writer-1.json', writer('1.0.0', 'Dear {{name}}, about {{topic}}.'));
  put('writer-2.json', writer('1.1.0', 'Hello {{name}}: {{topic}}!'));
  put('system.json', {
    templateId: 'acme.system',
    version: '1.0.0',
    kind: 'system',
    text: 'Be brief.',
    tags: ['editorial'],
  });
  return dir;
}

const memo = (version: string, text = `memo ${version}`) => ({ templateId: 'acme.memo', version, kind: 'user', text });

let db: string;
let token: string;
let clientToken: string;
let srv: Served;
let c: ReturnType<typeof client>;

beforeAll(async () => {
  db = tempDb();
  token = await makeToken(db, 'operator');
  clientToken = await makeToken(db, 'client');
  srv = await serve(db, ['--no-mhs', '--no-workflows', '--prompts', promptDir(), '--prompt-observability', 'full']);
  c = client(srv.url, token);
});
afterAll(async () => {
  await srv?.stop();
});

describe('/v1/prompts* with --prompts', () => {
  it('advertises the REST surface in a capabilities document that validates, and documents it in OpenAPI', async () => {
    const doc = (await c.get('/.well-known/openwop')).body;
    expect(openwopSchemas().check(schemaId('capabilities'), doc)).toEqual([]);
    expect(doc.prompts).toMatchObject({
      supported: true,
      endpointsSupported: true,
      mutableLibrary: true,
      packsSupported: false,
      maxTemplateBytes: 65536,
      library: { renderEndpoint: '/v1/prompts:render' },
    });
    const api = (await c.get('/v1/openapi.json')).body;
    expect(api.paths['/v1/prompts'].get.operationId).toBe('listPromptTemplates');
    expect(api.paths['/v1/prompts:render'].post.operationId).toBe('renderPromptTemplate');
    expect(api.paths['/v1/prompts/{templateId}'].delete.operationId).toBe('deletePromptTemplate');
  });

  it('lists the latest version of each template, filtered by kind, tag, modelClass and source', async () => {
    const all = await c.get('/v1/prompts');
    expect(all.status).toBe(200);
    const ids = all.body.items.map((t: { templateId: string }) => t.templateId);
    expect(ids).toEqual(expect.arrayContaining(['acme.system', 'acme.writer', 'conformance.prompt.writer-user']));
    expect(new Set(ids).size).toBe(ids.length);
    for (const t of all.body.items) expect(openwopSchemas().check(schemaId('prompt-template'), t)).toEqual([]);
    const w = all.body.items.find((t: { templateId: string }) => t.templateId === 'acme.writer');
    expect(w).toMatchObject({ version: '1.1.0', meta: { source: 'host' } });

    const kinds = (await c.get('/v1/prompts?kind=system')).body.items.map((t: { templateId: string }) => t.templateId);
    expect(kinds).toContain('acme.system');
    expect(kinds).not.toContain('acme.writer');
    const tagged = (await c.get('/v1/prompts?tag=editorial&tag=letters')).body.items;
    expect(tagged.map((t: { templateId: string }) => t.templateId)).toEqual(['acme.writer']);
    const one = (await c.get('/v1/prompts?tag=editorial')).body.items.map((t: { templateId: string }) => t.templateId);
    expect(one).toEqual(['acme.system', 'acme.writer']);
    expect((await c.get('/v1/prompts?modelClass=writing')).body.items).toHaveLength(1);
    expect((await c.get('/v1/prompts?source=pack')).body.items).toEqual([]);
  });

  it('pages with limit and an opaque cursor, visiting every template once', async () => {
    const all = (await c.get('/v1/prompts?limit=200')).body.items.map((t: { templateId: string }) => t.templateId);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await c.get(`/v1/prompts?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.items.map((t: { templateId: string }) => t.templateId));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all);
    for (const q of ['limit=0', 'limit=201', 'kind=prose', 'cursor=nope', 'colour=red']) {
      const r = await c.get(`/v1/prompts?${q}`);
      expect([q, r.status, r.body.error]).toEqual([q, 400, 'validation_error']);
    }
  });

  it('fetches the latest or a pinned version, with an ETag that revalidates to 304', async () => {
    const latest = await c.get('/v1/prompts/acme.writer');
    expect(latest.status).toBe(200);
    expect(latest.body).toMatchObject({ templateId: 'acme.writer', version: '1.1.0' });
    const etag = latest.headers.get('etag')!;
    expect(etag).toMatch(/^"sha256:[0-9a-f]{64}"$/);
    expect((await c.get('/v1/prompts/acme.writer', { 'if-none-match': etag })).status).toBe(304);

    const pinned = await c.get('/v1/prompts/acme.writer?version=1.0.0');
    expect(pinned.status).toBe(200);
    expect(pinned.body.text).toBe('Dear {{name}}, about {{topic}}.');
    expect(pinned.headers.get('cache-control')).toContain('immutable');
    expect((await c.get('/v1/prompts/acme.writer', { 'if-none-match': pinned.headers.get('etag')! })).status).toBe(200);

    const missing = await c.get('/v1/prompts/acme.nothing');
    expect([missing.status, missing.body.error]).toEqual([404, 'not_found']);
    const noVersion = await c.get('/v1/prompts/acme.writer?version=9.9.9');
    expect([noVersion.status, noVersion.body.error]).toEqual([404, 'not_found']);
    expect(noVersion.body.details.available).toEqual(['1.0.0', '1.1.0']);
    const badId = await c.get('/v1/prompts/Not%20An%20Id');
    expect([badId.status, badId.body.error]).toEqual([400, 'validation_error']);
  });

  it(':render composes like node execution: the hash is the prompt.composed hash of a real run', async () => {
    const r = await c.post('/v1/prompts:render', { ref: 'prompt:acme.writer@1.0.0', variables: { name: 'Ada' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      composed: 'Dear Ada, about things.',
      refs: ['prompt:acme.writer@1.0.0'],
      contentTrust: 'trusted',
    });
    expect(r.body.hash).toBe(`sha256:${sha256Hex('Dear Ada, about things.')}`);
    expect(Object.keys(r.body.variableHashes).sort()).toEqual(['name', 'topic']);
    const again = await c.post('/v1/prompts:render', { ref: 'prompt:acme.writer@1.0.0', variables: { name: 'Ada' } });
    expect(again.body).toEqual(r.body);

    const wf = oneNode('render-vs-run', {
      id: 'gen',
      typeId: 'local.sample.demo.mock-ai',
      config: { userPromptRef: 'prompt:acme.writer@1.0.0' },
      inputs: { name: { type: 'static', value: 'Ada' } },
    });
    expect((await c.post('/v1/workflows', wf)).status).toBe(201);
    const run = await c.post('/v1/runs', { workflowId: 'render-vs-run' });
    const snap = await c.until(run.body.runId, (s) => s.status === 'completed' || s.status === 'failed');
    expect(snap.status).toBe('completed');
    const composed = (await c.events(run.body.runId)).find((e) => e.type === 'prompt.composed')!;
    expect(composed.payload.hash).toBe(r.body.hash);
    expect(composed.payload.variableHashes).toEqual(r.body.variableHashes);

    const latest = await c.post('/v1/prompts:render', {
      ref: { templateId: 'acme.writer', variableOverrides: { topic: 'pumps' } },
      variables: { name: 'Bo', topic: 'valves' },
      contentTrust: 'untrusted',
    });
    expect(latest.body).toMatchObject({
      composed: 'Hello <UNTRUSTED>Bo</UNTRUSTED>: <UNTRUSTED>pumps</UNTRUSTED>!',
      refs: ['prompt:acme.writer@1.1.0'],
      contentTrust: 'untrusted',
    });
    const trusted = await c.post('/v1/prompts:render', {
      ref: { templateId: 'acme.writer', variableOverrides: { topic: 'pumps' } },
      variables: { name: 'Bo', topic: 'valves' },
    });
    expect(trusted.body.composed).toBe('Hello Bo: pumps!');
    expect(trusted.body.hash).not.toBe(latest.body.hash);
    expect(trusted.body.variableHashes).toEqual(latest.body.variableHashes);
  });

  it(':render refuses a missing required variable, a bad ref, an unknown template and a bad body', async () => {
    const unresolved = await c.post('/v1/prompts:render', { ref: 'prompt:acme.writer@1.0.0', variables: {} });
    expect([unresolved.status, unresolved.body.error]).toEqual([400, 'prompt_variable_unresolved']);
    expect(unresolved.body.details).toMatchObject({ variable: 'name' });
    const badRef = await c.post('/v1/prompts:render', { ref: 'writer', variables: {} });
    expect([badRef.status, badRef.body.error]).toEqual([400, 'prompt_ref_invalid']);
    const unknown = await c.post('/v1/prompts:render', { ref: 'prompt:acme.nothing@1.0.0', variables: {} });
    expect([unknown.status, unknown.body.error]).toEqual([404, 'not_found']);
    const huge = await c.post('/v1/prompts:render', {
      ref: 'prompt:acme.writer',
      variables: { name: 'x'.repeat(300_000) },
    });
    expect([huge.status, huge.body.error]).toEqual([413, 'validation_error']);
    for (const body of [{ ref: 'prompt:acme.writer' }, { ref: 'prompt:acme.writer', variables: [] }, 'not json']) {
      const r = await c.post('/v1/prompts:render', body);
      expect([r.status, r.body.error]).toEqual([400, 'validation_error']);
    }
  });

  it('a client token reads and renders but may not change the library (403 forbidden)', async () => {
    const cl = client(srv.url, clientToken);
    expect((await cl.get('/v1/prompts/acme.writer')).status).toBe(200);
    expect(
      (await cl.post('/v1/prompts:render', { ref: 'prompt:acme.writer@1.0.0', variables: { name: 'Ada' } })).status,
    ).toBe(200);
    for (const r of [
      await cl.post('/v1/prompts', { ...memo('1.0.0'), templateId: 'acme.client' }),
      await cl.call('PUT', '/v1/prompts/acme.writer', writer('9.0.0', 'x')),
      await cl.call('DELETE', '/v1/prompts/acme.writer'),
    ])
      expect([r.status, r.body?.error]).toEqual([403, 'forbidden']);
    expect((await c.get('/v1/prompts/acme.client')).status).toBe(404);
  });

  it('creates user templates, appends versions, deletes them; host templates are read-only (403)', async () => {
    const created = await c.post('/v1/prompts', memo('1.0.0'));
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe('/v1/prompts/acme.memo?version=1.0.0');
    expect(created.body).toMatchObject({ templateId: 'acme.memo', version: '1.0.0', meta: { source: 'user' } });
    expect(openwopSchemas().check(schemaId('prompt-template'), created.body)).toEqual([]);
    const users = (await c.get('/v1/prompts?source=user')).body.items.map((t: { templateId: string }) => t.templateId);
    expect(users).toEqual(['acme.memo']);

    const dup = await c.post('/v1/prompts', memo('1.0.0'));
    expect([dup.status, dup.body.error]).toEqual([409, 'conflict']);
    const shadow = await c.post('/v1/prompts', { ...memo('9.0.0'), templateId: 'acme.writer' });
    expect([shadow.status, shadow.body.error]).toEqual([403, 'forbidden']);
    const invalid = await c.post('/v1/prompts', { templateId: 'acme.bad', version: '1.0.0', text: 'no kind' });
    expect([invalid.status, invalid.body.error]).toEqual([400, 'validation_error']);
    const big = await c.post('/v1/prompts', { ...memo('1.0.0'), templateId: 'acme.big', text: 'é'.repeat(40_000) });
    expect([big.status, big.body.error]).toEqual([400, 'validation_error']);

    const same = await c.call('PUT', '/v1/prompts/acme.memo', memo('1.0.0', 'other'));
    expect([same.status, same.body.error]).toEqual([409, 'conflict']);
    const wrongId = await c.call('PUT', '/v1/prompts/acme.memo', { ...memo('2.0.0'), templateId: 'acme.other' });
    expect([wrongId.status, wrongId.body.error]).toEqual([400, 'validation_error']);
    const updated = await c.call('PUT', '/v1/prompts/acme.memo', memo('1.1.0'));
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ version: '1.1.0', meta: { source: 'user' } });
    expect((await c.get('/v1/prompts/acme.memo')).body.version).toBe('1.1.0');
    expect((await c.get('/v1/prompts/acme.memo?version=1.0.0')).body.text).toBe('memo 1.0.0');
    const hostPut = await c.call('PUT', '/v1/prompts/acme.writer', writer('2.0.0', 'x'));
    expect([hostPut.status, hostPut.body.error]).toEqual([403, 'forbidden']);
    const unknownPut = await c.call('PUT', '/v1/prompts/acme.ghost', { ...memo('1.0.0'), templateId: 'acme.ghost' });
    expect([unknownPut.status, unknownPut.body.error]).toEqual([404, 'not_found']);

    const hostDelete = await c.call('DELETE', '/v1/prompts/conformance.prompt.writer-user');
    expect([hostDelete.status, hostDelete.body.error]).toEqual([403, 'forbidden']);
    expect((await c.call('DELETE', '/v1/prompts/acme.memo')).status).toBe(204);
    expect((await c.get('/v1/prompts/acme.memo')).status).toBe(404);
    expect((await c.get('/v1/prompts/acme.memo?version=1.0.0')).status).toBe(404);
    expect((await c.post('/v1/prompts:render', { ref: 'prompt:acme.memo', variables: {} })).status).toBe(404);
    expect((await c.get('/v1/prompts?source=user')).body.items).toEqual([]);
    const again = await c.call('DELETE', '/v1/prompts/acme.memo');
    expect([again.status, again.body.error]).toEqual([404, 'not_found']);
    // Versions are never reused (the store is append-only); a new one recreates the template.
    const reused = await c.post('/v1/prompts', memo('1.1.0'));
    expect([reused.status, reused.body.error]).toEqual([409, 'conflict']);
    expect((await c.post('/v1/prompts', memo('2.0.0'))).status).toBe(201);
  });

  it('keeps user templates and deletions across a restart on the same store', async () => {
    expect((await c.post('/v1/prompts', { ...memo('1.0.0'), templateId: 'acme.keep' })).status).toBe(201);
    expect((await c.post('/v1/prompts', { ...memo('1.0.0'), templateId: 'acme.gone' })).status).toBe(201);
    expect((await c.call('DELETE', '/v1/prompts/acme.gone')).status).toBe(204);
    await srv.stop();
    srv = await serve(db, ['--no-mhs', '--no-workflows', '--prompts', promptDir()]);
    c = client(srv.url, token);
    expect((await c.get('/v1/prompts/acme.keep')).body).toMatchObject({ version: '1.0.0', meta: { source: 'user' } });
    expect((await c.get('/v1/prompts/acme.gone')).status).toBe(404);
    // Under the default `hashed` observability :render returns hashes only.
    const r = await c.post('/v1/prompts:render', { ref: 'prompt:acme.keep', variables: {} });
    expect(r.status).toBe(200);
    expect(r.body.composed).toBeUndefined();
    expect(r.body.hash).toBe(`sha256:${sha256Hex('memo 1.0.0')}`);
  });
});

describe('/v1/prompts* without --prompts', () => {
  it('answers 501 capability_not_provided to every operation (after the bearer check)', async () => {
    const db2 = tempDb();
    const t2 = await makeToken(db2);
    const bare = await serve(db2, ['--no-mhs', '--no-workflows']);
    try {
      const c2 = client(bare.url, t2);
      expect((await c2.get('/.well-known/openwop')).body.prompts).toBeUndefined();
      const calls: Array<[string, string, unknown?]> = [
        ['GET', '/v1/prompts'],
        ['GET', '/v1/prompts/acme.writer?version=1.0.0'],
        ['POST', '/v1/prompts:render', { ref: 'prompt:acme.writer', variables: {} }],
        ['POST', '/v1/prompts', memo('1.0.0')],
        ['PUT', '/v1/prompts/acme.memo', memo('1.0.0')],
        ['DELETE', '/v1/prompts/acme.memo'],
      ];
      for (const [method, path, body] of calls) {
        const r = await c2.call(method, path, body);
        expect([method, path, r.status, r.body.error]).toEqual([method, path, 501, 'capability_not_provided']);
      }
      const anon = await client(bare.url, 'wrong').get('/v1/prompts');
      expect([anon.status, anon.body.error]).toEqual([401, 'unauthorized']);
    } finally {
      await bare.stop();
    }
  });
});
