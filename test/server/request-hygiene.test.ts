// Guarantees (issue 16 item 3, "Errors"): request size and content-type limits answer the same on `/v1` and on the
// operator API (413 / 415 validation_error, never 500), router errors come back in the envelope
// `{error, message, details?}`, and API input holding a string JCS cannot encode (a lone surrogate in a run body or
// an operator's deny reason) is refused with validation_error before anything is written. Real Fastify app, real
// SQLite store; the operator API runs against a real simulator with a real pending approval.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are read loosely in assertions */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, RealClock, isErrorCode } from '../../src/core/index.js';
import { openDb } from '../../src/ledger/index.js';
import type { Db } from '../../src/ledger/index.js';
import { createOpenwopHost } from '../../src/openwop/host.js';
import type { OpenwopHost } from '../../src/openwop/host.js';
import { createTokenStore } from '../../src/policy/tokens.js';
import type { ApprovalRequest } from '../../src/policy/approval-rules.js';
import { buildApp } from '../../src/server/app.js';
import { startOperatorHost } from '../policy/helpers/operator-host.js';
import type { OperatorHost } from '../policy/helpers/operator-host.js';

const clock = new RealClock();

function envelope(body: any): void {
  expect(Object.keys(body).filter((k) => !['error', 'message', 'details'].includes(k))).toEqual([]);
  expect(isErrorCode(body.error)).toBe(true);
  expect(typeof body.message).toBe('string');
}

describe('/v1 (in-process app)', () => {
  let db: Db;
  let host: OpenwopHost;
  let app: Awaited<ReturnType<typeof buildApp>>['app'];
  let auth: Record<string, string>;
  beforeAll(async () => {
    db = await openDb(join(mkdtempSync(join(tmpdir(), 'mhs-hygiene-')), 'host.db'));
    host = await createOpenwopHost({ db, clock, workflowsDir: false });
    auth = { authorization: `Bearer ${(await createTokenStore(db, clock).add('c', 'client')).token}` };
    ({ app } = await buildApp({ host, auth: createTokenStore(db, clock), clock }));
  });
  afterAll(async () => {
    await app.close();
    await host.close();
    await db.close();
  });

  it('a run body with a lone surrogate → 400 validation_error, no run created', async () => {
    const before = (await app.inject({ method: 'GET', url: '/v1/runs', headers: auth })).json().runs.length;
    for (const payload of [
      '{"workflowId":"conformance-noop","inputs":{"x":"\\ud800"}}',
      '{"workflowId":"conformance-noop","inputs":{"\\udc00":1}}',
    ]) {
      const res = await app.inject({
        method: 'POST',
        url: '/v1/runs',
        headers: { ...auth, 'content-type': 'application/json' },
        payload,
      });
      expect(res.statusCode).toBe(400);
      envelope(res.json());
      expect(res.json()).toMatchObject({ error: ErrorCode.VALIDATION_ERROR, details: { reason: 'lone_surrogate' } });
    }
    expect((await app.inject({ method: 'GET', url: '/v1/runs', headers: auth })).json().runs.length).toBe(before);
  });

  it('415, 413, bad JSON and router errors are envelopes', async () => {
    const post = (headers: Record<string, string>, payload: string) =>
      app.inject({ method: 'POST', url: '/v1/runs', headers: { ...auth, ...headers }, payload });
    const r415 = await post({ 'content-type': 'application/x-www-form-urlencoded' }, 'a=1');
    expect(r415.statusCode).toBe(415);
    envelope(r415.json());
    const big = JSON.stringify({ workflowId: 'x', inputs: { pad: 'x'.repeat(host.limits.maxRequestBodyBytes) } });
    const r413 = await post({ 'content-type': 'application/json' }, big);
    expect(r413.statusCode).toBe(413);
    envelope(r413.json());
    const bad = await post({ 'content-type': 'application/json' }, '{"workflowId":');
    expect(bad.statusCode).toBe(400);
    envelope(bad.json());
    const unknown = await app.inject({ method: 'DELETE', url: '/v1/nowhere', headers: auth });
    expect(unknown.statusCode).toBe(404);
    envelope(unknown.json());
    const badUrl = await app.inject({ method: 'GET', url: '/v1/runs/%E0%A4%A', headers: auth });
    expect(badUrl.statusCode).toBe(400);
    envelope(badUrl.json());
  });
});

describe('operator API (real simulator, real approval)', () => {
  let h: OperatorHost;
  beforeAll(async () => {
    h = await startOperatorHost({ families: 'liquid-handler' });
  });
  afterAll(async () => {
    await h?.close();
  });

  const raw = (path: string, headers: Record<string, string>, body: string) =>
    fetch(`${h.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.tokens.op1}`, ...headers },
      body,
    });

  it('415 and 413 answer as on /v1, never 500', async () => {
    const r415 = await raw('/v1/operator/estop', { 'content-type': 'application/xml' }, '<stop/>');
    expect(r415.status).toBe(415);
    envelope(await r415.json());
    const r413 = await raw(
      '/v1/operator/estop',
      { 'content-type': 'application/json' },
      JSON.stringify({ endpoint_id: 'x'.repeat(2 * 1024 * 1024), device_id: 'd' }),
    );
    expect(r413.status).toBe(413);
    envelope(await r413.json());
    const bad = await raw('/v1/operator/estop', { 'content-type': 'application/json' }, '{"endpoint_id"');
    expect(bad.status).toBe(400);
    envelope(await bad.json());
  });

  it('a deny reason with a lone surrogate → 400 validation_error; the approval stays pending, nothing recorded', async () => {
    const asked = new Promise<ApprovalRequest>((resolve) => {
      const off = h.services.events.subscribe((e) => {
        if (e.type === 'approval.requested') {
          off();
          resolve(e.data.approval as ApprovalRequest);
        }
      });
    });
    const call = h.engine.invoke({
      endpointId: h.endpointId,
      deviceId: 'liquid-handler',
      capabilityId: 'cap.liquid.aspirate.v1',
      input: { volume_ul: 10 },
    });
    call.catch(() => undefined);
    const req = await asked;
    const head = (await h.ledger.head()).seq;
    const r = await h.api(h.tokens.op1, 'POST', `/v1/operator/approvals/${req.approval_id}/deny`, {
      reason: 'bad \ud800 reason',
    });
    expect(r.status).toBe(400);
    envelope(r.body);
    expect(r.body).toMatchObject({ error: ErrorCode.VALIDATION_ERROR, details: { reason: 'lone_surrogate' } });
    expect((await h.ledger.head()).seq).toBe(head);
    expect(h.ledger.status().state).toBe('available');
    expect((await h.api(h.tokens.op1, 'GET', `/v1/operator/approvals/${req.approval_id}`)).body.status).toBe('pending');
    const ok = await h.api(h.tokens.op1, 'POST', `/v1/operator/approvals/${req.approval_id}/deny`, {
      reason: 'fine',
    });
    expect(ok.body.status).toBe('denied');
    await expect(call).rejects.toMatchObject({ code: ErrorCode.HOST_APPROVAL_DENIED });
  });
});
