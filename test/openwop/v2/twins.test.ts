// Guarantees (OpenWOP v2 openapi listAgents/getAgent, the prompt-library operations, getWorkflow, getRunAncestry,
// getOpenApiSpec; runs.md §Diff and ancestry; errors.md; identity.md §5), over real HTTP against `mhs-host serve` on
// SQLite and, when MHS_TEST_PG_URL is set, PostgreSQL, under OpenWOP-Version 2: each twin reads the same engine state
// as its /v1/ path (the agent inventory, the prompt library, the workflow catalog, run ancestry), answers failures in
// the v2 envelope with registered codes (prompt codes with no v2 row as their class, the host code in
// details.hostCode), binds run ids to the tenant, and the v2 OpenAPI document lists the mounted operations by their
// manifest names. Without the header an unversioned path is major 1's 400 naming its /v1/ path.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are read loosely in assertions */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../../ledger/helpers.js';
import type { StoreHandle } from '../../ledger/helpers.js';
import { ROOT, makeToken, serve } from '../../server/serve-helpers.js';
import type { Served } from '../../server/serve-helpers.js';
import { call, pollToEnd, v2Problems } from './v2-kit.js';

const V2 = { version: '2' };
const AGENT = 'vendor.acme.twin.clerk';

function packsDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mhs-v2-twins-'));
  mkdirSync(join(dir, 'p'));
  writeFileSync(
    join(dir, 'p', 'pack.json'),
    JSON.stringify({
      name: 'vendor.acme.twin',
      version: '1.0.0',
      engines: { openwop: '>=1.1.0' },
      runtime: { language: 'remote', entry: 'https://packs.example/remote' },
      agents: [{ agentId: AGENT, persona: 'Clerk', modelClass: 'general', systemPrompt: 'CLERK: file things.' }],
    }),
  );
  return dir;
}

const memo = (version: string) => ({
  templateId: 'acme.memo',
  version,
  kind: 'user',
  text: `memo ${version} for {{name}}`,
  variables: [{ name: 'name', type: 'string', required: true }],
});

describe.each(BACKENDS)('v2 twins of the v1 registry operations on $name', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let client: string;
  let operator: string;
  const v1 = (method: string, path: string, body?: unknown, token = client) =>
    call(srv.url, method, `/v1${path}`, { token, ...(body !== undefined ? { body } : {}) });
  const v2 = (method: string, path: string, body?: unknown, token = client, headers: Record<string, string> = {}) =>
    call(srv.url, method, path, { token, ...V2, headers, ...(body !== undefined ? { body } : {}) });

  beforeAll(async () => {
    h = await backend.fresh();
    client = await makeToken(h.location, 'client');
    operator = await makeToken(h.location, 'operator', 'op');
    srv = await serve(h.location, ['--prompts', '--agent-packs', packsDir()]);
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
  });

  it('agents: the inventory /v1/agents reads, one entry, and 404 not_found for an agent not installed', async () => {
    const list = await v2('GET', '/agents');
    expect(list.status).toBe(200);
    expect(list.headers.get('openwop-version')).toBe('2.0');
    expect(list.body).toEqual((await v1('GET', '/agents')).body);
    expect(list.body.agents.map((a: any) => a.agentId)).toContain(AGENT);
    const one = await v2('GET', `/agents/${AGENT}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual((await v1('GET', `/agents/${AGENT}`)).body);
    expect(JSON.stringify(one.body)).not.toContain('CLERK: file things.');
    const none = await v2('GET', '/agents/vendor.acme.none');
    expect(none.status).toBe(404);
    expect(v2Problems('error-envelope', none.body)).toEqual([]);
    expect(none.body.error).toBe('not_found');
  });

  it('prompts: list, fetch with ETag and 304, render as /v1/ does; mutations need an operator', async () => {
    const list = await v2('GET', '/prompts');
    expect(list.status).toBe(200);
    expect(list.body).toEqual((await v1('GET', '/prompts')).body);
    const id = list.body.items[0].templateId as string;
    const one = await v2('GET', `/prompts/${id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual((await v1('GET', `/prompts/${id}`)).body);
    const etag = one.headers.get('etag')!;
    const again = await v2('GET', `/prompts/${id}`, undefined, client, { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.headers.get('openwop-version')).toBe('2.0');

    const refused = await v2('POST', '/prompts', memo('1.0.0'));
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('forbidden');
    const created = await v2('POST', '/prompts', memo('1.0.0'), operator);
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe('/prompts/acme.memo?version=1.0.0');
    const dup = await v2('POST', '/prompts', memo('1.0.0'), operator);
    expect(dup.status).toBe(409);
    expect(v2Problems('error-envelope', dup.body)).toEqual([]);
    const next = await v2('PUT', '/prompts/acme.memo', memo('1.1.0'), operator);
    expect(next.status).toBe(200);
    expect(next.body.version).toBe('1.1.0');

    const ref = { templateId: 'acme.memo', version: '1.1.0' };
    const rendered = await v2('POST', '/prompts:render', { ref, variables: { name: 'Ada' } });
    expect(rendered.status).toBe(200);
    expect(rendered.body).toEqual((await v1('POST', '/prompts:render', { ref, variables: { name: 'Ada' } })).body);
    expect(rendered.body.hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    const unbound = await v2('POST', '/prompts:render', { ref, variables: {} });
    expect(unbound.status).toBe(400);
    expect(unbound.body).toMatchObject({
      error: 'validation_error',
      details: { hostCode: 'prompt_variable_unresolved' },
    });
    expect(v2Problems('error-envelope', unbound.body)).toEqual([]);

    expect((await v2('DELETE', '/prompts/acme.memo', undefined, operator)).status).toBe(204);
    const gone = await v2('GET', '/prompts/acme.memo');
    expect(gone.status).toBe(404);
    expect(gone.body.error).toBe('not_found');
    expect((await v1('GET', '/prompts/acme.memo')).status).toBe(404);
  });

  it('workflows: the catalog definition /v1/ serves; an unknown id is 404, a malformed one 400', async () => {
    const wf = await v2('GET', '/workflows/subworkflow-example');
    expect(wf.status).toBe(200);
    expect(wf.body).toEqual((await v1('GET', '/workflows/subworkflow-example')).body);
    const none = await v2('GET', '/workflows/no-such-workflow');
    expect(none.status).toBe(404);
    expect(none.body.error).toBe('not_found');
    expect((await v2('GET', '/workflows/a%20b')).body.error).toBe('validation_error');
  });

  it('ancestry: a child names its parent by tenant-bound ids; a top-level run has parent null', async () => {
    const parent = await v2('POST', '/runs', { workflowId: 'conformance-subworkflow-parent' });
    expect(parent.status).toBe(201);
    await pollToEnd(srv.url, parent.body.eventsUrl, client);
    const bare = parent.body.runId.split('/')[1].replace('-', '_');
    const snap = await v1('GET', `/runs/${bare}`);
    const child = snap.body.childRuns[0].runId as string;
    const seg = encodeURIComponent(`local/${child.replace('_', '-')}`);
    const anc = await v2('GET', `/runs/${seg}/ancestry`);
    expect(anc.status).toBe(200);
    const v1anc = (await v1('GET', `/runs/${child}/ancestry`)).body;
    expect(anc.body).toEqual({
      runId: `local/${child.replace('_', '-')}`,
      hostId: v1anc.hostId,
      parent: { ...v1anc.parent, runId: parent.body.runId },
    });
    expect(v2Problems('ids#/$defs/runId', anc.body.parent.runId)).toEqual([]);
    const top = await v2('GET', `${parent.body.statusUrl}/ancestry`);
    expect(top.body).toEqual({ runId: parent.body.runId, hostId: v1anc.hostId, parent: null });
    const other = await v2('GET', `/runs/${encodeURIComponent('acme/run-x')}/ancestry`);
    expect(other.status).toBe(403);
    expect(other.body.error).toBe('id_tenant_mismatch');
  });

  it('openapi.json: unauthenticated, 2.0, the mounted operations under their manifest paths and ids', async () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'vendor/openwop/spec/v2/path-manifest.json'), 'utf8')) as {
      operations: Array<{ method: string; path: string; operationId: string }>;
    };
    const doc = await call(srv.url, 'GET', '/openapi.json', V2);
    expect(doc.status).toBe(200);
    expect(doc.headers.get('openwop-version')).toBe('2.0');
    expect(doc.body.openapi).toBe('3.1.0');
    const listed = Object.entries(doc.body.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
      Object.entries(item).map(([m, o]) => ({ method: m.toUpperCase(), path, operationId: o.operationId })),
    );
    for (const op of listed) expect(manifest.operations).toContainEqual(expect.objectContaining(op));
    const ids = listed.map((o) => o.operationId);
    for (const id of [
      'createRun',
      'getRun',
      'listAgents',
      'renderPromptTemplate',
      'getWorkflow',
      'getRunAncestry',
      'bulkCancelRuns',
      'pauseRun',
      'resumeRun',
      'getEffectSeamManifest',
      'getRunEffects',
    ])
      expect(ids).toContain(id);
  });

  it('without the header an unversioned twin is major 1, which has none: 400 naming the /v1/ path', async () => {
    const r = await call(srv.url, 'GET', '/agents', { token: client });
    expect(r.status).toBe(400);
    expect(r.headers.get('openwop-version')).toBe('1.0');
    expect(r.body.details.v1Path).toBe('/v1/agents');
  });
});
