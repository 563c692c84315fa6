// Guarantees (OpenWOP v2 runs.md, events.md §Poll, identity.md §5), over real HTTP against `mhs-host serve` on SQLite
// and, when MHS_TEST_PG_URL is set, PostgreSQL, under OpenWOP-Version 2: `POST /runs` takes the closed v2 body and
// answers 201 {runId, status, eventsUrl, statusUrl} with a tenant-bound runId whose links resolve at this origin;
// the poll answers {runId, events, lastSequence, status, isTerminal} with v2 events (vendored run-event schema,
// v2 type names per the published codemap, schemaVersion, v2 ids); `GET /runs/{runId}` is the closed snapshot with
// an ETag and 304; `GET /runs` lists the caller's runs as snapshots with an opaque cursor; refusals use the v2
// registry codes and statuses; a run created through /v1/ reads through /runs under its bound id.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../../ledger/helpers.js';
import type { StoreHandle } from '../../ledger/helpers.js';
import { makeToken, serve } from '../../server/serve-helpers.js';
import type { Served } from '../../server/serve-helpers.js';
import { call, codemap, pollToEnd, v2EventProblems, v2Problems } from './v2-kit.js';

const V2 = { version: '2' };

describe.each(BACKENDS)('v2 run paths on $name', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let token: string;
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    call(srv.url, 'POST', '/runs', { token, ...V2, body, headers });
  const get = (path: string, headers: Record<string, string> = {}) =>
    call(srv.url, 'GET', path, { token, ...V2, headers });

  beforeAll(async () => {
    h = await backend.fresh();
    token = await makeToken(h.location, 'client');
    srv = await serve(h.location, ['--openwop-v2']);
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
  });

  it('creates a run from the v2 body and its links resolve; the poll carries v2 events to the terminal one', async () => {
    const created = await post({ workflowId: 'conformance-noop', inputs: { n: 1 }, tags: ['v2'] });
    expect(created.status).toBe(201);
    expect(created.headers.get('openwop-version')).toBe('2.0');
    expect(v2Problems('ids#/$defs/runId', created.body.runId)).toEqual([]);
    expect(['pending', 'running', 'waiting-approval', 'waiting-input', 'waiting-external']).toContain(
      created.body.status,
    );
    for (const link of [created.body.eventsUrl, created.body.statusUrl]) expect(link).toMatch(/^\/runs\/[^/]+/);
    expect(created.headers.get('location')).toBe(created.body.statusUrl);

    const { events, last } = await pollToEnd(srv.url, created.body.eventsUrl, token);
    expect(last).toMatchObject({ runId: created.body.runId, status: 'completed', isTerminal: true });
    expect(Object.keys(last).sort()).toEqual(['events', 'isTerminal', 'lastSequence', 'runId', 'status']);
    expect(last.lastSequence).toBe(events.at(-1).sequence);
    const v2Types = new Set(codemap().values());
    events.forEach((e, i) => {
      expect(v2EventProblems(e), `${e.type}#${e.sequence}`).toEqual([]);
      expect(e.sequence).toBe(i);
      expect(e.runId).toBe(created.body.runId);
      expect(v2Types.has(e.type)).toBe(true);
    });
    expect(events[0].type).toBe('run.started');
    // runs.md §The start event: run.started echoes the snapshot's owner.
    const snap = await get(created.body.statusUrl);
    expect(snap.status).toBe(200);
    expect(events[0].payload.owner).toEqual(snap.body.owner);
    expect(events.at(-1).type).toBe('run.completed');
    expect(typeof events.at(-1).payload.outputs).toBe('object');
  });

  it('the v2 events are the v1 log of the same run, renamed through the published codemap', async () => {
    const created = await post({ workflowId: 'conformance-noop' });
    const { events } = await pollToEnd(srv.url, created.body.eventsUrl, token);
    const bare = created.body.runId.split('/')[1].replace('-', '_');
    const v1 = await call(srv.url, 'GET', `/v1/runs/${bare}/events`, { token });
    expect(v1.status).toBe(200);
    const map = codemap();
    expect(events.map((e) => [e.sequence, e.type])).toEqual(
      v1.body.events.map((e: any) => [e.sequence, map.get(e.type)]),
    );
    expect(events.map((e) => e.timestamp)).toEqual(v1.body.events.map((e: any) => e.timestamp));
  });

  it('GET /runs/{runId} is the snapshot with an ETag that answers If-None-Match with 304', async () => {
    const created = await post({ workflowId: 'conformance-noop', metadata: { k: 'v' } });
    await pollToEnd(srv.url, created.body.eventsUrl, token);
    const r = await get(created.body.statusUrl);
    expect(r.body).toMatchObject({
      runId: created.body.runId,
      workflowId: 'conformance-noop',
      status: 'completed',
      metadata: { k: 'v' },
    });
    expect(r.body.eventLogSchemaVersion).toBeGreaterThanOrEqual(2);
    expect(Number.isInteger(r.body.engineVersion)).toBe(true);
    expect(r.body.owner.subject).toMatchObject({ tenant: r.body.owner.tenant });
    expect(r.body.runId.startsWith(`${r.body.owner.tenant}/`)).toBe(true);
    const etag = r.headers.get('etag')!;
    expect(etag).toMatch(/^"[^"]+"$/);
    const cached = await get(created.body.statusUrl, { 'if-none-match': etag });
    expect(cached.status).toBe(304);
    expect(cached.text).toBe('');
  });

  it('the create body is closed, and refusals carry v2 registry codes and statuses', async () => {
    const cases: Array<[unknown, number, string]> = [
      [{ workflowId: 'conformance-noop', colour: 'red' }, 400, 'validation_error'],
      [{}, 400, 'validation_error'],
      [{ workflowId: 'conformance-noop', callbackUrl: 'https://example.test/cb' }, 400, 'validation_error'],
      [{ workflowId: 'conformance-noop', tenantId: 'someone-else' }, 403, 'id_tenant_mismatch'],
      [
        { workflowId: 'conformance-noop', tags: Array.from({ length: 101 }, (_, i) => `t${i}`) },
        400,
        'validation_error',
      ],
    ];
    for (const [body, status, code] of cases) {
      const r = await post(body);
      expect([r.status, r.body.error], JSON.stringify(body)).toEqual([status, code]);
      expect(v2Problems('error-envelope', r.body)).toEqual([]);
    }
    const callback = await post({ workflowId: 'conformance-noop', callbackUrl: 'https://example.test/cb' });
    expect(callback.body.details.field).toBe('callbackUrl');
    const anonymous = await call(srv.url, 'POST', '/runs', { ...V2, body: { workflowId: 'conformance-noop' } });
    expect([anonymous.status, anonymous.body.error]).toEqual([401, 'unauthenticated']);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it('an Idempotency-Key replay returns the same run; the same key with another body is idempotency_key_mismatch; a key outside the grammar is idempotency_key_invalid', async () => {
    // idempotency.md Layer 1: 22-128 characters of [A-Za-z0-9._~-]; a shorter key is refused, creating nothing.
    const short = await post({ workflowId: 'conformance-noop' }, { 'idempotency-key': 'v2-key-1' });
    expect([short.status, short.body.error]).toEqual([400, 'idempotency_key_invalid']);
    const key = { 'idempotency-key': 'v2-key-1-0123456789abcdef' };
    const a = await post({ workflowId: 'conformance-noop', inputs: { a: 1 } }, key);
    const b = await post({ workflowId: 'conformance-noop', inputs: { a: 1 } }, key);
    expect(a.status).toBe(201);
    expect(b.body.runId).toBe(a.body.runId);
    expect(b.headers.get('openwop-idempotent-replay')).toBe('true');
    expect(a.headers.get('openwop-idempotent-replay')).toBeNull();
    const c = await post({ workflowId: 'conformance-noop', inputs: { a: 2 } }, key);
    expect([c.status, c.body.error]).toEqual([409, 'idempotency_key_mismatch']);
  });

  it('run ids: another tenant is 403 id_tenant_mismatch, an unknown run 404, a broken projection 400', async () => {
    const created = await post({ workflowId: 'conformance-noop' });
    const opaque = created.body.runId.split('/')[1];
    const other = await get(`/runs/elsewhere~2F${opaque}`);
    expect([other.status, other.body.error]).toEqual([403, 'id_tenant_mismatch']);
    const unknown = await get(`/runs/${created.body.runId.split('/')[0]}~2Frun-01ARZ3NDEKTSV4RRFFQ69G5FAV`);
    expect([unknown.status, unknown.body.error]).toEqual([404, 'not_found']);
    const broken = await get(`/runs/local~ZZ${opaque}`);
    expect([broken.status, broken.body.error]).toEqual([400, 'validation_error']);
    // identity.md §5: the percent-encoded form resolves the same run.
    const percent = await get(`/runs/${encodeURIComponent(created.body.runId)}`);
    expect([percent.status, percent.body.runId]).toEqual([200, created.body.runId]);
  });

  it('the poll refuses an afterSequence below 0 and a timeout outside 1..60 s; past the end it is 200 and empty', async () => {
    const created = await post({ workflowId: 'conformance-noop' });
    const { last } = await pollToEnd(srv.url, created.body.eventsUrl, token);
    for (const q of ['afterSequence=-1', 'timeout=0', 'timeout=61', 'afterSequence=x']) {
      const r = await get(`${created.body.eventsUrl}/poll?${q}`);
      expect([r.status, r.body.error], q).toEqual([400, 'validation_error']);
    }
    const past = await get(`${created.body.eventsUrl}/poll?afterSequence=${last.lastSequence + 10}&timeout=1`);
    expect(past.status).toBe(200);
    expect(past.body).toMatchObject({ events: [], lastSequence: last.lastSequence, isTerminal: true });
  });

  it('GET /runs lists the caller runs newest first as snapshots, in pages of limit joined by an opaque cursor', async () => {
    for (let i = 0; i < 3; i++) await post({ workflowId: 'conformance-noop', tags: ['listed'] });
    const seen: any[] = [];
    let url = '/runs?limit=2';
    for (let pages = 0; pages < 50; pages++) {
      const r = await get(url);
      expect(r.status).toBe(200);
      expect(r.body.runs.length).toBeLessThanOrEqual(2);
      seen.push(...r.body.runs);
      if (!r.body.nextCursor) break;
      url = `/runs?limit=2&cursor=${r.body.nextCursor}`;
    }
    const ids = seen.map((r) => r.runId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const r of seen) expect(v2Problems('ids#/$defs/runId', r.runId)).toEqual([]);
    const all = await call(srv.url, 'GET', '/v1/runs?limit=200', { token });
    expect(ids.length).toBe(all.body.runs.length);
    const started = seen.map((r) => r.startedAt ?? '');
    expect(started).toEqual([...started].sort().reverse());
    const filtered = await get('/runs?workflowId=conformance-noop&status=completed&limit=200');
    for (const r of filtered.body.runs) expect([r.workflowId, r.status]).toEqual(['conformance-noop', 'completed']);
    const forged = await get(`/runs?cursor=${Buffer.from('["x"]').toString('base64url')}`);
    expect([forged.status, forged.body.error]).toEqual([400, 'validation_error']);
  });

  it('cancel: a waiting run answers 200 cancelling/cancelled and ends cancelled; a terminal run is 409 run_terminal', async () => {
    const created = await post({ workflowId: 'conformance-approval' });
    let after: number | undefined;
    for (;;) {
      const q = `?timeout=5${after !== undefined ? `&afterSequence=${after}` : ''}`;
      const p = await get(`${created.body.eventsUrl}/poll${q}`);
      if (p.body.events.length) after = p.body.events.at(-1).sequence;
      if (p.body.status === 'waiting-approval') break;
    }
    const bad = await call(srv.url, 'POST', `${created.body.statusUrl}/cancel`, { token, ...V2, body: { why: 1 } });
    expect([bad.status, bad.body.error]).toEqual([400, 'validation_error']);
    const r = await call(srv.url, 'POST', `${created.body.statusUrl}/cancel`, {
      token,
      ...V2,
      body: { reason: 'test' },
    });
    expect(r.status).toBe(200);
    expect(r.body.runId).toBe(created.body.runId);
    expect(['cancelling', 'cancelled']).toContain(r.body.status);
    const { events, last } = await pollToEnd(srv.url, created.body.eventsUrl, token);
    expect(last.status).toBe('cancelled');
    expect(events.at(-1).type).toBe('run.cancelled');
    const again = await call(srv.url, 'POST', `${created.body.statusUrl}/cancel`, { token, ...V2, body: {} });
    expect([again.status, again.body.error]).toEqual([409, 'run_terminal']);
    const done = await post({ workflowId: 'conformance-noop' });
    await pollToEnd(srv.url, done.body.eventsUrl, token);
    const finished = await call(srv.url, 'POST', `${done.body.statusUrl}/cancel`, { token, ...V2, body: {} });
    expect([finished.status, finished.body.error]).toEqual([409, 'run_terminal']);
    expect(v2Problems('error-envelope', finished.body)).toEqual([]);
  });

  it('resolve by run: {resumeValue} releases the gate; again is 409 interrupt_already_resolved; no such node 404', async () => {
    const created = await post({ workflowId: 'conformance-approval' });
    let after: number | undefined;
    for (;;) {
      const q = `?timeout=5${after !== undefined ? `&afterSequence=${after}` : ''}`;
      const p = await get(`${created.body.eventsUrl}/poll${q}`);
      if (p.body.events.length) after = p.body.events.at(-1).sequence;
      if (p.body.status === 'waiting-approval') break;
    }
    const at = (node: string, body: unknown) =>
      call(srv.url, 'POST', `${created.body.statusUrl}/interrupts/${node}`, { token, ...V2, body });
    const open = await at('gate', { action: 'accept' });
    expect([open.status, open.body.error]).toEqual([400, 'validation_error']);
    const notOffered = await at('gate', { resumeValue: { action: 'launch' } });
    expect([notOffered.status, notOffered.body.error]).toEqual([400, 'validation_error']);
    const nowhere = await at('no-such-node', { resumeValue: { action: 'accept' } });
    expect([nowhere.status, nowhere.body.error]).toEqual([404, 'not_found']);
    const ok = await at('gate', { resumeValue: { action: 'accept' } });
    expect(ok.status).toBe(200);
    expect(ok.body.runId).toBe(created.body.runId);
    const { events, last } = await pollToEnd(srv.url, created.body.eventsUrl, token);
    expect(last.status).toBe('completed');
    expect(events.some((e) => e.type === 'interrupt.resolved' && e.nodeId === 'gate')).toBe(true);
    const again = await at('gate', { resumeValue: { action: 'accept' } });
    expect([again.status, again.body.error]).toEqual([409, 'interrupt_already_resolved']);
    expect(v2Problems('error-envelope', again.body)).toEqual([]);
  });

  it('a run created through /v1/ without a header reads through /runs under major 2, bound to the tenant', async () => {
    const v1 = await call(srv.url, 'POST', '/v1/runs', { token, body: { workflowId: 'conformance-noop' } });
    expect(v1.status).toBe(201);
    expect(v1.headers.get('openwop-version')).toBe('1.0');
    const bare = await get(`/runs/${v1.body.runId}`);
    expect(bare.status).toBe(200);
    expect(bare.headers.get('openwop-version')).toBe('2.0');
    expect(v2Problems('ids#/$defs/runId', bare.body.runId)).toEqual([]);
    expect(bare.body.runId).not.toBe(v1.body.runId);
    const bound = await get(`/runs/${encodeURIComponent(bare.body.runId)}`);
    expect(bound.body.runId).toBe(bare.body.runId);
  });
});
