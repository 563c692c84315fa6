// Guarantees: GET /v1/runs lists runs newest first from the store, filtered by status and workflowId, in pages of
// `limit` joined by `nextCursor` (every run exactly once, null after the last page); bad queries (unknown status,
// limit out of 1-200, unknown parameter, forged cursor) are 400 validation_error, and no token is 401.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are read loosely in assertions */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RealClock } from '../../src/core/index.js';
import { openDb } from '../../src/ledger/index.js';
import type { Db } from '../../src/ledger/index.js';
import { createOpenwopHost } from '../../src/openwop/host.js';
import type { OpenwopHost } from '../../src/openwop/host.js';
import { createTokenStore } from '../../src/policy/tokens.js';
import { buildApp } from '../../src/server/app.js';
import { waitForEvent } from '../openwop/service-test-kit.js';

const clock = new RealClock();
let db: Db;
let host: OpenwopHost;
let app: Awaited<ReturnType<typeof buildApp>>['app'];
let auth: Record<string, string>;
const started: Record<string, string[]> = { 'conformance-noop': [], 'conformance-approval': [] };

const get = async (url: string, headers = auth) => {
  const res = await app.inject({ method: 'GET', url, headers });
  return { status: res.statusCode, body: res.json() as any };
};

beforeAll(async () => {
  db = await openDb(join(mkdtempSync(join(tmpdir(), 'mhs-runs-list-')), 'host.db'));
  host = await createOpenwopHost({ db, clock, workflowsDir: false });
  auth = { authorization: `Bearer ${(await createTokenStore(db, clock).add('lister', 'client')).token}` };
  ({ app } = await buildApp({ host, auth: createTokenStore(db, clock), clock }));
  for (let i = 0; i < 5; i++) {
    for (const workflowId of Object.keys(started)) {
      const res = await app.inject({ method: 'POST', url: '/v1/runs', headers: auth, payload: { workflowId } });
      started[workflowId]!.push((res.json() as { runId: string }).runId);
    }
  }
  for (const runId of started['conformance-noop']!) await host.runs.waitTerminal(runId);
  // The run's status turns waiting-approval in the same append as its interrupt.requested event.
  for (const runId of started['conformance-approval']!)
    await waitForEvent(host, runId, (e) => e.type === 'interrupt.requested');
});

afterAll(async () => {
  await app.close();
  await host.close();
  await db.close();
});

describe('GET /v1/runs', () => {
  it('pages through every run exactly once, newest first', async () => {
    const seen: any[] = [];
    let url = '/v1/runs?limit=3';
    for (let pages = 0; pages < 10; pages++) {
      const { status, body } = await get(url);
      expect(status).toBe(200);
      expect(body.runs.length).toBeLessThanOrEqual(3);
      seen.push(...body.runs);
      if (!body.nextCursor) break;
      url = `/v1/runs?limit=3&cursor=${body.nextCursor}`;
    }
    const all = Object.values(started).flat();
    expect(seen.map((r) => r.runId).sort()).toEqual([...all].sort());
    const created = seen.map((r) => `${r.createdAt}|${r.runId}`);
    expect(created).toEqual([...created].sort().reverse());
  });

  it('filters by status and by workflowId against what each run really is', async () => {
    const waiting = await get('/v1/runs?status=waiting-approval');
    expect(waiting.body.runs.map((r: any) => r.runId).sort()).toEqual([...started['conformance-approval']!].sort());
    expect(waiting.body.nextCursor).toBeNull();
    const noop = await get('/v1/runs?workflowId=conformance-noop&status=completed');
    expect(noop.body.runs.map((r: any) => r.runId).sort()).toEqual([...started['conformance-noop']!].sort());
    for (const r of noop.body.runs) expect((await host.runs.snapshot(r.runId)).status).toBe('completed');
    expect((await get('/v1/runs?workflowId=nothing-here')).body).toEqual({ runs: [], nextCursor: null });
  });

  it('refuses bad queries with validation_error and requires a token', async () => {
    for (const q of ['status=done', 'limit=0', 'limit=201', 'limit=ten', 'sort=asc', 'cursor=bm90LWEtY3Vyc29y']) {
      const { status, body } = await get(`/v1/runs?${q}`);
      expect(status, q).toBe(400);
      expect(body.error, q).toBe('validation_error');
    }
    expect((await get('/v1/runs', {})).status).toBe(401);
  });
});
