// Guarantees (OpenWOP v2 versioning.md §1.3–§1.4, capabilities.md §1), over real HTTP against `mhs-host serve` on
// SQLite and, when MHS_TEST_PG_URL is set, PostgreSQL: the header selects the major — no header is the preferred
// major (1 through the overlap), `2` and `2.0` are the same request, an unknown major is 406
// protocol_version_unsupported echoing protocolVersions, a /v1/ path under another major is 400
// protocol_version_mismatch (before authentication); every protocol response names its contract in OpenWOP-Version;
// the discovery document is one resource: the v1 document without a header (valid against the v1 schemas) and the
// closed v2 root under major 2, with a strong ETag and 304 on If-None-Match. Major 2 is served by default;
// `serve --no-openwop-v2` serves major 1 alone and answers major 2 406 listing only 1.0.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openwopSchemas, schemaId } from '../../../src/openwop/schemas.js';
import { BACKENDS } from '../../ledger/helpers.js';
import type { StoreHandle } from '../../ledger/helpers.js';
import { makeToken, serve } from '../../server/serve-helpers.js';
import type { Served } from '../../server/serve-helpers.js';
import { call, hasV2Schema, v2Problems } from './v2-kit.js';

describe.each(BACKENDS)('OpenWOP-Version negotiation on $name', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let token: string;
  beforeAll(async () => {
    h = await backend.fresh();
    token = await makeToken(h.location, 'client');
    srv = await serve(h.location);
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
  });

  it('no header: the v1 document, valid against the v1 capabilities schema, named 1.0, varying on the header', async () => {
    const r = await call(srv.url, 'GET', '/.well-known/openwop');
    expect(r.status).toBe(200);
    expect(r.headers.get('openwop-version')).toBe('1.0');
    expect(r.headers.get('vary')?.toLowerCase()).toContain('openwop-version');
    expect(openwopSchemas().check(schemaId('capabilities'), r.body)).toEqual([]);
    expect(r.body.protocolVersion).toBe('1.0');
  });

  it('OpenWOP-Version 2 and 2.0 select the same closed v2 root, which lists both majors and prefers 1.x', async () => {
    const two = await call(srv.url, 'GET', '/.well-known/openwop', { version: '2' });
    const twoZero = await call(srv.url, 'GET', '/.well-known/openwop', { version: '2.0' });
    expect(two.status).toBe(200);
    expect(two.headers.get('openwop-version')).toBe('2.0');
    expect(two.text).toBe(twoZero.text);
    expect(two.body.protocolVersions).toEqual(expect.arrayContaining(['1.0', '2.0']));
    // versioning.md §1.1: through the overlap preferredVersion names a 1.x member of protocolVersions.
    expect(two.body.protocolVersions).toContain(two.body.preferredVersion);
    expect(two.body.preferredVersion).toMatch(/^1\.\d+$/);
    // capabilities.md §4: keys deleted from the v2 root.
    for (const k of ['supportedTransports', 'contractProvenance', 'profiles']) expect(two.body).not.toHaveProperty(k);
  });

  it('the v2 root validates against the vendored v2 capabilities schema (and its $refs)', async () => {
    expect(hasV2Schema('capabilities')).toBe(true);
    const two = await call(srv.url, 'GET', '/.well-known/openwop', { version: '2' });
    expect(v2Problems('capabilities', two.body)).toEqual([]);
  });

  it('the v2 root carries a strong ETag and answers If-None-Match with 304 and no body', async () => {
    const first = await call(srv.url, 'GET', '/.well-known/openwop', { version: '2' });
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[^"]+"$/);
    const again = await call(srv.url, 'GET', '/.well-known/openwop', { version: '2' });
    expect(again.headers.get('etag')).toBe(etag);
    const cached = await call(srv.url, 'GET', '/.well-known/openwop', {
      version: '2',
      headers: { 'if-none-match': etag! },
    });
    expect(cached.status).toBe(304);
    expect(cached.text).toBe('');
    const stale = await call(srv.url, 'GET', '/.well-known/openwop', {
      version: '2',
      headers: { 'if-none-match': '"not-this-one"' },
    });
    expect(stale.status).toBe(200);
  });

  it('a major not served is 406 protocol_version_unsupported with details.protocolVersions', async () => {
    const root = (await call(srv.url, 'GET', '/.well-known/openwop', { version: '2' })).body;
    for (const [path, version] of [
      ['/.well-known/openwop', '3'],
      ['/runs', '9.1'],
      ['/runs', 'two'],
    ] as const) {
      const r = await call(srv.url, 'GET', path, { token, version });
      expect(r.status, `${path} ${version}`).toBe(406);
      expect(r.body.error).toBe('protocol_version_unsupported');
      expect(r.body.details.protocolVersions).toEqual(root.protocolVersions);
      expect(v2Problems('error-envelope', r.body)).toEqual([]);
    }
  });

  it('a /v1/ path under another major is 400 protocol_version_mismatch, even without a token', async () => {
    for (const version of ['2', '2.0', '3']) {
      const withToken = await call(srv.url, 'GET', '/v1/runs', { token, version });
      expect(withToken.status).toBe(400);
      expect(withToken.body.error).toBe('protocol_version_mismatch');
      expect(v2Problems('error-envelope', withToken.body)).toEqual([]);
    }
    const anonymous = await call(srv.url, 'POST', '/v1/runs', { version: '2', body: { workflowId: 'x' } });
    expect(anonymous.status).toBe(400);
    expect(anonymous.body.error).toBe('protocol_version_mismatch');
  });

  it('a /v1/ path with OpenWOP-Version 1 or none is served under major 1 and says so', async () => {
    for (const version of ['1', '1.0', undefined]) {
      const r = await call(srv.url, 'GET', '/v1/runs', { token, ...(version ? { version } : {}) });
      expect(r.status).toBe(200);
      expect(r.headers.get('openwop-version')).toBe('1.0');
    }
  });

  it('an unversioned run path without the header is served as major 1, which has no unversioned operations: 400', async () => {
    const r = await call(srv.url, 'GET', '/runs', { token });
    expect(r.status).toBe(400);
    expect(r.headers.get('openwop-version')).toBe('1.0');
    const v2 = await call(srv.url, 'GET', '/runs', { token, version: '2' });
    expect(v2.status).toBe(200);
    expect(v2.headers.get('openwop-version')).toBe('2.0');
  });
});

// `serve --no-openwop-v2` serves major 1 alone: major 2 is neither advertised nor served.
describe('with --no-openwop-v2', () => {
  let h: StoreHandle;
  let srv: Served;
  let token: string;
  beforeAll(async () => {
    h = await BACKENDS[0]!.fresh();
    token = await makeToken(h.location, 'client');
    srv = await serve(h.location, ['--no-openwop-v2']);
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
  });

  it('answers major 2 with 406 protocol_version_unsupported listing only 1.0, and keeps the v1 document', async () => {
    for (const [method, path] of [
      ['GET', '/.well-known/openwop'],
      ['GET', '/runs'],
      ['POST', '/runs'],
      ['GET', '/agents'],
    ] as const) {
      const r = await call(srv.url, method, path, {
        token,
        version: '2',
        ...(method === 'POST' ? { body: { workflowId: 'x' } } : {}),
      });
      expect(r.status, `${method} ${path}`).toBe(406);
      expect(r.body.error).toBe('protocol_version_unsupported');
      expect(r.body.details.protocolVersions).toEqual(['1.0']);
    }
    const v1 = await call(srv.url, 'GET', '/.well-known/openwop');
    expect(v1.status).toBe(200);
    expect(v1.body.protocolVersion).toBe('1.0');
    expect(openwopSchemas().check(schemaId('capabilities'), v1.body)).toEqual([]);
  });
});
