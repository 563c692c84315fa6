// Guarantees (OpenWOP v2 idempotency.md Layer 1 on `resolveInterruptByRun`, interrupt.md §Resolve surfaces), over real
// HTTP against `mhs-host serve` on SQLite and, when MHS_TEST_PG_URL is set, PostgreSQL, under OpenWOP-Version 2:
// a resolve retried with the same `Idempotency-Key` and body is answered from the record of the first — the same
// status and body, `OpenWOP-Idempotent-Replay: true` — and the run's log holds one `interrupt.resolved`; the key with
// another body is `409 idempotency_key_mismatch`; a key outside the grammar is `400 idempotency_key_invalid`; a
// non-retryable 4xx outcome (`409 interrupt_already_resolved`) is a final outcome and is replayed, while a
// `400 validation_error` is not recorded, so the same key then resolves; a record made by one token does not answer
// another token's request; of two concurrent same-key resolves exactly one is processed; `:pause` and `:resume`
// honour the key the same way, each operation with its own records.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are read loosely in assertions */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../../ledger/helpers.js';
import type { StoreHandle } from '../../ledger/helpers.js';
import { makeToken, serve } from '../../server/serve-helpers.js';
import type { Served } from '../../server/serve-helpers.js';
import { call, pollToEnd, v2Problems } from './v2-kit.js';

const ACCEPT = { resumeValue: { action: 'accept' } };

describe.each(BACKENDS)('Idempotency-Key on a v2 interrupt resolve on $name', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let token: string;
  let other: string;
  beforeAll(async () => {
    h = await backend.fresh();
    token = await makeToken(h.location, 'client', 'first');
    other = await makeToken(h.location, 'client', 'second');
    srv = await serve(h.location);
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
  });

  /** A `conformance-approval` run waiting at its gate: its statusUrl and eventsUrl. */
  async function waiting(): Promise<{ statusUrl: string; eventsUrl: string }> {
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

  const resolve = (run: { statusUrl: string }, body: unknown, key?: string, as = token) =>
    call(srv.url, 'POST', `${run.statusUrl}/interrupts/gate`, {
      token: as,
      version: '2',
      body,
      ...(key !== undefined ? { headers: { 'idempotency-key': key } } : {}),
    });

  it('a retried resolve is answered from the first; the log has one interrupt.resolved; another body is a mismatch', async () => {
    const run = await waiting();
    const key = randomUUID();
    const first = await resolve(run, ACCEPT, key);
    expect(first.status).toBe(200);
    expect(first.headers.get('openwop-idempotent-replay')).toBeNull();
    const again = await resolve(run, ACCEPT, key);
    expect(again.status).toBe(200);
    expect(again.headers.get('openwop-idempotent-replay')).toBe('true');
    expect(again.headers.get('openwop-version')).toBe('2.0');
    expect(again.text).toBe(first.text);
    const { events, last } = await pollToEnd(srv.url, run.eventsUrl, token);
    expect(last.status).toBe('completed');
    expect(events.filter((e: any) => e.type === 'interrupt.resolved')).toHaveLength(1);
    const mismatch = await resolve(run, { resumeValue: { action: 'reject' } }, key);
    expect([mismatch.status, mismatch.body.error]).toEqual([409, 'idempotency_key_mismatch']);
    expect(mismatch.headers.get('openwop-idempotent-replay')).toBeNull();
    expect(v2Problems('error-envelope', mismatch.body)).toEqual([]);
    // The record is the caller's: another token with the same key is processed on its own.
    const theirs = await resolve(run, ACCEPT, key, other);
    expect([theirs.status, theirs.body.error]).toEqual([409, 'interrupt_already_resolved']);
    expect(theirs.headers.get('openwop-idempotent-replay')).toBeNull();
  });

  it('two concurrent resolves under one key: exactly one is processed, the other replays it or is told it is in flight', async () => {
    const run = await waiting();
    const key = randomUUID();
    const both = await Promise.all([resolve(run, ACCEPT, key), resolve(run, ACCEPT, key)]);
    const processed = both.filter((r) => r.status === 200 && r.headers.get('openwop-idempotent-replay') === null);
    expect(processed).toHaveLength(1);
    for (const r of both.filter((x) => x !== processed[0])) {
      if (r.status === 409) {
        expect(r.body.error).toBe('idempotency_in_flight');
        expect(r.headers.get('retry-after')).toBe('1');
      } else expect([r.status, r.headers.get('openwop-idempotent-replay')]).toEqual([200, 'true']);
    }
    const { events } = await pollToEnd(srv.url, run.eventsUrl, token);
    expect(events.filter((e: any) => e.type === 'interrupt.resolved')).toHaveLength(1);
  });

  it('pause and resume honour the key: a retried pause or resume is answered from the first, one event each', async () => {
    const run = await waiting();
    const action = (what: 'pause' | 'resume', key: string) =>
      call(srv.url, 'POST', `${run.statusUrl}:${what}`, {
        token,
        version: '2',
        body: {},
        headers: { 'idempotency-key': key },
      });
    const [pk, rk] = [randomUUID(), randomUUID()];
    const paused = await action('pause', pk);
    expect([paused.status, paused.body.status]).toEqual([202, 'paused']);
    const pausedAgain = await action('pause', pk);
    expect([pausedAgain.status, pausedAgain.headers.get('openwop-idempotent-replay')]).toEqual([202, 'true']);
    expect(pausedAgain.text).toBe(paused.text);
    // Without the key the second pause is processed, and refused as the state conflict it is.
    const plain = await call(srv.url, 'POST', `${run.statusUrl}:pause`, { token, version: '2', body: {} });
    expect([plain.status, plain.body.error]).toEqual([409, 'run_state_conflict']);
    const resumed = await action('resume', rk);
    expect([resumed.status, resumed.body.status]).toEqual([202, 'running']);
    const resumedAgain = await action('resume', rk);
    expect([resumedAgain.status, resumedAgain.headers.get('openwop-idempotent-replay')]).toEqual([202, 'true']);
    // The pause's key on the resume endpoint is another operation's record: processed on its own.
    const crossed = await action('resume', pk);
    expect([crossed.status, crossed.body.error]).toEqual([409, 'run_state_conflict']);
    expect((await resolve(run, ACCEPT)).status).toBe(200);
    const { events } = await pollToEnd(srv.url, run.eventsUrl, token);
    expect(events.filter((e: any) => e.type === 'run.paused')).toHaveLength(1);
    expect(events.filter((e: any) => e.type === 'run.resumed')).toHaveLength(1);
  });

  it('a key outside the grammar is 400 idempotency_key_invalid and resolves nothing', async () => {
    const run = await waiting();
    for (const bad of ['short', 'x'.repeat(129), 'has space in it but is long enough']) {
      const r = await resolve(run, ACCEPT, bad);
      expect([r.status, r.body.error]).toEqual([400, 'idempotency_key_invalid']);
    }
    const snap = await call(srv.url, 'GET', run.statusUrl, { token, version: '2' });
    expect(snap.body.status).toBe('waiting-approval');
    expect((await resolve(run, ACCEPT)).status).toBe(200);
  });

  it('a final 4xx is replayed; a validation_error is not recorded, so the same key then resolves', async () => {
    const run = await waiting();
    const key = randomUUID();
    const invalid = await resolve(run, { resumeValue: { action: 'launch' } }, key);
    expect([invalid.status, invalid.body.error]).toEqual([400, 'validation_error']);
    const ok = await resolve(run, ACCEPT, key);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('openwop-idempotent-replay')).toBeNull();
    const late = randomUUID();
    const gone = await resolve(run, ACCEPT, late);
    expect([gone.status, gone.body.error]).toEqual([409, 'interrupt_already_resolved']);
    const replayed = await resolve(run, ACCEPT, late);
    expect([replayed.status, replayed.body.error]).toEqual([409, 'interrupt_already_resolved']);
    expect(replayed.headers.get('openwop-idempotent-replay')).toBe('true');
    expect(replayed.text).toBe(gone.text);
  });
});
