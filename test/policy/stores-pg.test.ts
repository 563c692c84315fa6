// Guarantees: the policy gate's durable parts (approval requests with compare-and-set votes, the
// voiding of a changed input, permit claim/revoke state) behave the same on PostgreSQL as on SQLite
// (runs when MHS_TEST_PG_URL is set; CI sets it).
import { describe, expect, it } from 'vitest';
import { ErrorCode, H, RealClock } from '../../src/core/index.js';
import { openLedger } from '../../src/ledger/index.js';
import type { Db } from '../../src/ledger/db.js';
import { createPermitService } from '../../src/policy/permits.js';
import { makeCtx } from './helpers/ctx.js';
import { alice, bob, gateEnv } from './helpers/gate-env.js';
import { openTestDb, openTestPg } from './helpers/test-db.js';

const stores: Array<[string, () => Promise<Db | undefined>]> = [
  ['sqlite', openTestDb],
  ['postgres', openTestPg],
];

describe.each(stores)('policy stores (%s)', (_name, open) => {
  it('HOST-041, HOST-044: votes, dual control and voiding are durable and race-free', async (t) => {
    const db = await open();
    if (!db) return t.skip();
    const env = await gateEnv({ db });
    const key = { approvalKey: 'run:r:n' };
    let asked = env.nextRequest();
    const ac = new AbortController();
    const first = env.gate.authorize(
      { ...makeCtx('laser', { energy_mj: 1, pulses: 1 }, Date.now()), ...key },
      ac.signal,
    );
    const req = await asked;
    ac.abort(); // the caller left (e.g. a restart); the request stays pending for the operators
    await first;
    // Two operators vote at once: both land (distinct), the request is approved exactly once.
    await Promise.all([
      env.gate.vote(req.approval_id, { principal: alice, decision: 'approve' }),
      env.gate.vote(req.approval_id, { principal: bob, decision: 'approve' }),
    ]);
    const after = await env.gate.get(req.approval_id);
    expect(after).toMatchObject({ status: 'approved' });
    expect(after?.votes.map((v) => v.principal.id).sort()).toEqual(['tok_alice', 'tok_bob']);
    asked = env.nextRequest();
    const ac2 = new AbortController();
    const second = env.gate.authorize(
      { ...makeCtx('laser', { energy_mj: 2, pulses: 1 }, Date.now()), ...key },
      ac2.signal,
    );
    const req2 = await asked;
    expect(req2.input_digest).toBe(H({ energy_mj: 2, pulses: 1 }));
    expect((await env.gate.get(req.approval_id))?.status).toBe('voided');
    ac2.abort();
    expect(await second).toMatchObject({ kind: 'deny', code: ErrorCode.HOST_APPROVAL_REQUIRED });
    await db.close();
  });

  it('HOST-047, HOST-070: a permit is claimed once, and a revoked one cannot be claimed', async (t) => {
    const db = await open();
    if (!db) return t.skip();
    const clock = new RealClock();
    const ledger = await openLedger(db, { clock });
    const calls: string[] = [];
    // A stand-in operator connection: this test is about the stores; the real simulator path is in
    // operator-api.test.ts and the console tests.
    const link = {
      operatorConnection: async () => ({
        endpointId: 'mhs://x',
        protocolVersion: '2026-07-28',
        closed: new Promise<never>(() => undefined),
        close: async () => undefined,
        listTools: async () => [],
        callTool: async (name: string, args: Record<string, unknown>) => {
          calls.push(`${name}:${String(args.action)}`);
          return {
            isError: false,
            structuredContent: {
              permit_id: `prm_${calls.length}`,
              input_digest: args.input_digest,
              expires_at: new Date(clock.now() + 60_000).toISOString(),
              single_use: true,
              state: 'issued',
            },
          };
        },
      }),
    };
    const permits = createPermitService({ db, ledger, clock, link });
    const req = {
      approval_id: 'apr_1',
      endpoint_id: 'mhs://x',
      device_id: 'd',
      session_id: 'ses_1',
      capability_id: 'c',
      input_digest: H({ a: 1 }),
      ttl_ms: 60_000,
    };
    const p1 = await permits.issue(req);
    const p2 = await permits.issue(req);
    expect((await permits.list()).map((p) => p.permit_id).sort()).toEqual([p1.permit_id, p2.permit_id].sort());
    const claims = await Promise.all([permits.claim(p1.permit_id), permits.claim(p1.permit_id)]);
    expect(claims.filter(Boolean)).toHaveLength(1);
    await permits.revoke(p2.permit_id, { id: 'tok_a', name: 'alice' });
    expect(await permits.claim(p2.permit_id)).toBe(false);
    await expect(permits.revoke(p1.permit_id, { id: 'tok_a', name: 'alice' })).rejects.toMatchObject({
      code: ErrorCode.CONFLICT,
    });
    expect(await permits.list()).toEqual([]);
    expect(calls).toEqual(['mhs__permit:issue', 'mhs__permit:issue', 'mhs__permit:revoke']);
    await db.close();
  });
});
