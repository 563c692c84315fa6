// Guarantees (OpenWOP v2 idempotency.md Layer 1 on `cancelRun` and `bulkCancelRuns`, runs.md §Cancel), over real HTTP
// against `mhs-host serve` on SQLite and, when MHS_TEST_PG_URL is set, PostgreSQL, under OpenWOP-Version 2: a cancel
// retried with the same `Idempotency-Key` and body is answered from the record of the first (the same status and body,
// `OpenWOP-Idempotent-Replay: true`) instead of `409 run_terminal`, and the run's log holds one `run.cancelled`; the key
// with another body is `409 idempotency_key_mismatch`; a key outside the grammar is `400 idempotency_key_invalid` and
// cancels nothing; without a key a second cancel is still `409 run_terminal`; a bulk cancel honours the key the same
// way, with its own records.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are read loosely in assertions */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../../ledger/helpers.js';
import type { StoreHandle } from '../../ledger/helpers.js';
import { makeToken, serve } from '../../server/serve-helpers.js';
import type { Served } from '../../server/serve-helpers.js';
import { call, pollToEnd, v2Problems } from './v2-kit.js';

describe.each(BACKENDS)('Idempotency-Key on a v2 cancel on $name', (backend) => {
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

  /** A `conformance-approval` run waiting at its gate (it stays live until answered or cancelled). */
  async function waiting(): Promise<{ runId: string; statusUrl: string; eventsUrl: string }> {
    const created = await call(srv.url, 'POST', '/runs', {
      token,
      version: '2',
      body: { workflowId: 'conformance-approval' },
    });
    expect(created.status).toBe(201);
    for (;;) {
      const p = await call(srv.url, 'GET', `${created.body.eventsUrl}/poll?timeout=5`, { token, version: '2' });
      if (p.body.status === 'waiting-approval') return created.body;
    }
  }

  const cancel = (run: { statusUrl: string }, body: unknown, key?: string) =>
    call(srv.url, 'POST', `${run.statusUrl}/cancel`, {
      token,
      version: '2',
      body,
      ...(key !== undefined ? { headers: { 'idempotency-key': key } } : {}),
    });

  it('a retried cancel is answered from the first, not run_terminal; the log has one run.cancelled', async () => {
    const run = await waiting();
    const key = randomUUID();
    const first = await cancel(run, { reason: 'operator stop' }, key);
    expect(first.status).toBe(200);
    expect(first.body.runId).toBe(run.runId);
    expect(['cancelling', 'cancelled']).toContain(first.body.status);
    expect(first.headers.get('openwop-idempotent-replay')).toBeNull();
    const { events, last } = await pollToEnd(srv.url, run.eventsUrl, token);
    expect(last.status).toBe('cancelled');
    const again = await cancel(run, { reason: 'operator stop' }, key);
    expect(again.status).toBe(200);
    expect(again.headers.get('openwop-idempotent-replay')).toBe('true');
    expect(again.headers.get('openwop-version')).toBe('2.0');
    expect(again.text).toBe(first.text);
    const after = await pollToEnd(srv.url, run.eventsUrl, token);
    expect(after.events.filter((e: any) => e.type === 'run.cancelled')).toHaveLength(1);
    expect(events.filter((e: any) => e.type === 'run.cancelled')).toHaveLength(1);
    // Without the key the rule of runs.md §Cancel stands: the run is terminal.
    const bare = await cancel(run, { reason: 'operator stop' });
    expect([bare.status, bare.body.error]).toEqual([409, 'run_terminal']);
    // The key with another body is the one mismatch code, never the cached body.
    const mismatch = await cancel(run, { reason: 'another reason' }, key);
    expect([mismatch.status, mismatch.body.error]).toEqual([409, 'idempotency_key_mismatch']);
    expect(mismatch.headers.get('openwop-idempotent-replay')).toBeNull();
    expect(v2Problems('error-envelope', mismatch.body)).toEqual([]);
  });

  it('a key outside the grammar is 400 idempotency_key_invalid and cancels nothing', async () => {
    const run = await waiting();
    const bad = await cancel(run, {}, 'too-short');
    expect([bad.status, bad.body.error]).toEqual([400, 'idempotency_key_invalid']);
    const snap = await call(srv.url, 'GET', run.statusUrl, { token, version: '2' });
    expect(snap.body.status).toBe('waiting-approval');
    const ok = await cancel(run, {});
    expect(ok.status).toBe(200);
    expect((await pollToEnd(srv.url, run.eventsUrl, token)).last.status).toBe('cancelled');
  });

  it('a retried bulk cancel is answered from the first; its records are its own', async () => {
    const run = await waiting();
    const key = randomUUID();
    const bulk = (body: unknown) =>
      call(srv.url, 'POST', '/runs:bulk-cancel', { token, version: '2', body, headers: { 'idempotency-key': key } });
    const first = await bulk({ runIds: [run.runId] });
    expect(first.status).toBe(200);
    expect(first.body.results).toMatchObject([{ runId: run.runId, ok: true }]);
    expect((await pollToEnd(srv.url, run.eventsUrl, token)).last.status).toBe('cancelled');
    const again = await bulk({ runIds: [run.runId] });
    expect(again.status).toBe(200);
    expect(again.headers.get('openwop-idempotent-replay')).toBe('true');
    expect(again.text).toBe(first.text);
    // Unrecorded, the same request answers the entry's own refusal.
    const fresh = await call(srv.url, 'POST', '/runs:bulk-cancel', {
      token,
      version: '2',
      body: { runIds: [run.runId] },
    });
    expect(fresh.body.results).toMatchObject([{ runId: run.runId, ok: false, error: { error: 'run_terminal' } }]);
    // The same key on the single cancel is another operation's record: processed on its own.
    const single = await cancel(run, {}, key);
    expect([single.status, single.body.error]).toEqual([409, 'run_terminal']);
  });
});
