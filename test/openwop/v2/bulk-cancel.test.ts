// Guarantees (OpenWOP v2 runs.md §Bulk cancel, errors.md, identity.md §5), over real HTTP against `mhs-host serve` on
// SQLite and, when MHS_TEST_PG_URL is set, PostgreSQL, under OpenWOP-Version 2: `POST /runs:bulk-cancel` cancels
// each id on its own and answers 200 `{results}` in request order even when entries fail; a cancelled entry is
// `ok: true` with `cancelling`/`cancelled` and its run ends cancelled; a terminal run is `run_terminal`, another
// tenant's id `id_tenant_mismatch`, an unknown id `not_found`, each as a v2 error envelope in its entry; over the cap
// the request is 400 validation_error with details.maxRunIds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../../ledger/helpers.js';
import type { StoreHandle } from '../../ledger/helpers.js';
import { makeToken, serve } from '../../server/serve-helpers.js';
import type { Served } from '../../server/serve-helpers.js';
import { call, pollToEnd, v2Problems } from './v2-kit.js';

describe.each(BACKENDS)('v2 bulk cancel on $name', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let token: string;
  const post = (path: string, body: unknown) => call(srv.url, 'POST', path, { token, version: '2', body });

  beforeAll(async () => {
    h = await backend.fresh();
    token = await makeToken(h.location, 'client');
    srv = await serve(h.location);
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
  });

  it('cancels each id independently and reports every entry in request order', async () => {
    const a = (await post('/runs', { workflowId: 'conformance-cancellable' })).body;
    const b = (await post('/runs', { workflowId: 'conformance-cancellable' })).body;
    const done = (await post('/runs', { workflowId: 'conformance-noop' })).body;
    await pollToEnd(srv.url, done.eventsUrl, token);
    const foreign = 'acme/run-00000000000000000000000000';
    const unknown = 'local/run-00000000000000000000000000';
    const ids = [a.runId, done.runId, foreign, b.runId, unknown];

    const r = await post('/runs:bulk-cancel', { runIds: ids, reason: 'bulk' });
    expect(r.status).toBe(200);
    expect(r.headers.get('openwop-version')).toBe('2.0');
    expect(r.body.results.map((x: { runId: string }) => x.runId)).toEqual(ids);
    const [ra, rdone, rforeign, rb, runknown] = r.body.results;
    for (const ok of [ra, rb]) {
      expect(ok.ok).toBe(true);
      expect(['cancelling', 'cancelled']).toContain(ok.status);
    }
    expect(rdone).toMatchObject({ ok: false, error: { error: 'run_terminal' } });
    expect(rforeign).toMatchObject({ ok: false, error: { error: 'id_tenant_mismatch' } });
    expect(runknown).toMatchObject({ ok: false, error: { error: 'not_found' } });
    for (const bad of [rdone, rforeign, runknown]) expect(v2Problems('error-envelope', bad.error)).toEqual([]);

    for (const run of [a, b]) {
      const { last, events } = await pollToEnd(srv.url, run.eventsUrl, token);
      expect(last.status).toBe('cancelled');
      expect(events.at(-1).type).toBe('run.cancelled');
    }
  });

  it('refuses more ids than the cap, and a malformed body, with 400 validation_error', async () => {
    const many = Array.from({ length: 101 }, (_, i) => `local/run-${String(i).padStart(26, '0')}`);
    const over = await post('/runs:bulk-cancel', { runIds: many });
    expect(over.status).toBe(400);
    expect(over.body).toMatchObject({ error: 'validation_error', details: { maxRunIds: 100 } });
    for (const body of [{}, { runIds: [] }, { runIds: ['local/x'], extra: 1 }]) {
      const r = await post('/runs:bulk-cancel', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error).toBe('validation_error');
    }
  });
});
