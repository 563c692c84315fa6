// Guarantees (OpenWOP v2 runs.md §Diff and ancestry, RFC 0054), over real HTTP against `mhs-host serve` on SQLite
// and, when MHS_TEST_PG_URL is set, PostgreSQL, under OpenWOP-Version 2: `GET /runs/{runId}:diff?against=` is a pure
// function of the two logs — a run against itself gives divergedAtSeq null, no eventDiffs and no stateDiff; two runs
// whose inputs differ diverge at the first differing sequence, each diff entry carrying v2 events; eventId, runId and
// timestamp are not compared; a run still in flight marks the diff truncated; a missing `against` is 400, an unknown
// run 404, another tenant's id 403 id_tenant_mismatch.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../../ledger/helpers.js';
import type { StoreHandle } from '../../ledger/helpers.js';
import { makeToken, serve } from '../../server/serve-helpers.js';
import type { Served } from '../../server/serve-helpers.js';
import { call, pollToEnd, v2EventProblems } from './v2-kit.js';

describe.each(BACKENDS)('v2 run diff on $name', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let token: string;
  const post = (path: string, body: unknown) => call(srv.url, 'POST', path, { token, version: '2', body });
  const diff = (a: any, against?: string) =>
    call(
      srv.url,
      'GET',
      `${a.statusUrl}:diff${against !== undefined ? `?against=${encodeURIComponent(against)}` : ''}`,
      { token, version: '2' },
    );
  const finished = async (body: unknown) => {
    const run = (await post('/runs', body)).body;
    await pollToEnd(srv.url, run.eventsUrl, token);
    return run;
  };

  beforeAll(async () => {
    h = await backend.fresh();
    token = await makeToken(h.location, 'client');
    srv = await serve(h.location);
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
  });

  it('a run against itself is identical; runs with other inputs diverge at the first differing event', async () => {
    const a = await finished({ workflowId: 'conformance-noop', inputs: { n: 1 } });
    const same = await diff(a, a.runId);
    expect(same.status).toBe(200);
    expect(same.headers.get('openwop-version')).toBe('2.0');
    expect(same.body).toEqual({ a: a.runId, b: a.runId, divergedAtSeq: null, eventDiffs: [], stateDiff: {} });

    const b = await finished({ workflowId: 'conformance-noop', inputs: { n: 2 } });
    const d = await diff(a, b.runId);
    expect(d.status).toBe(200);
    expect(d.body.a).toBe(a.runId);
    expect(d.body.b).toBe(b.runId);
    expect(d.body.truncated).toBeUndefined();
    expect(d.body.eventDiffs.length).toBeGreaterThan(0);
    expect(d.body.divergedAtSeq).toBe(d.body.eventDiffs[0].seq);
    const seqs = d.body.eventDiffs.map((x: any) => x.seq);
    expect(seqs).toEqual([...seqs].sort((x: number, y: number) => x - y));
    for (const e of d.body.eventDiffs) {
      expect(e.op).toBe('changed');
      for (const ev of [e.aEvent, e.bEvent]) expect(v2EventProblems(ev)).toEqual([]);
      // Each entry differs beyond the run-scoped fields the comparison excludes.
      const strip = ({ eventId: _e, runId: _r, timestamp: _t, causationId: _c, ...rest }: any) => rest;
      expect(strip(e.aEvent)).not.toEqual(strip(e.bEvent));
    }
  });

  it('a run in flight makes the diff truncated', async () => {
    const done = await finished({ workflowId: 'conformance-noop' });
    const live = (await post('/runs', { workflowId: 'conformance-cancellable' })).body;
    const d = await diff(done, live.runId);
    expect(d.status).toBe(200);
    expect(d.body.truncated).toBe(true);
    expect((await post(`${live.statusUrl}/cancel`, {})).status).toBe(200);
  });

  it('refuses a missing against (400), an unknown run (404) and another tenant (403)', async () => {
    const a = await finished({ workflowId: 'conformance-noop' });
    expect((await diff(a)).body.error).toBe('validation_error');
    const unknown = await diff(a, 'local/run-00000000000000000000000000');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe('not_found');
    const foreign = await diff(a, 'acme/run-00000000000000000000000000');
    expect(foreign.status).toBe(403);
    expect(foreign.body.error).toBe('id_tenant_mismatch');
  });
});
