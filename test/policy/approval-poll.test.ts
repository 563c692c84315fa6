// Guarantees: a call waiting for a human approval sees a decision made by another host process on the same
// store by re-reading it every `MHS_APPROVAL_POLL_MS` (default 2000 ms), read when a host runtime opens; a
// malformed value refuses to open the runtime with MHS.HOST.CONFIG_INVALID (HOST-043: waiting never decides).
import { describe, expect, it, vi } from 'vitest';
import { ErrorCode, SimulatedClock } from '../../src/core/index.js';
import { openOperatorRuntime } from '../../src/engine/operator-runtime.js';
import {
  APPROVAL_POLL_ENV_VAR,
  DEFAULT_APPROVAL_POLL_MS,
  DEFAULT_POLICY,
  approvalPollMsFromEnv,
} from '../../src/policy/index.js';
import type { ApprovalRequest } from '../../src/policy/index.js';
import { makeCtx } from './helpers/ctx.js';
import { alice, gateEnv } from './helpers/gate-env.js';
import { openTestDb } from './helpers/test-db.js';

const ticks = async (n = 20) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

/**
 * Opens a runtime with `env`, makes it wait for an approval, denies that approval through a second gate on the
 * same store (another process: its decision wakes no waiter here), and returns after how many simulated ms
 * of polling the waiting call saw the decision (checked at `steps`).
 */
async function decisionSeenAfter(env: Record<string, string>, steps: number[]): Promise<number | undefined> {
  const db = await openTestDb();
  const clock = new SimulatedClock(Date.now());
  const rt = await openOperatorRuntime(db, clock, DEFAULT_POLICY, { env });
  try {
    const asked = new Promise<ApprovalRequest>((resolve) =>
      rt.services.events.subscribe((e) => {
        if (e.type === 'approval.requested') resolve(e.data.approval as ApprovalRequest);
      }),
    );
    let decided: unknown;
    void rt.services.gate
      .authorize(makeCtx('liquid-handler', { volume_ul: 5 }, clock.now()))
      .then((d) => (decided = d));
    const req = await asked;
    const other = await gateEnv({ db, ledger: rt.ledger, clock });
    await other.gate.vote(req.approval_id, { principal: alice, decision: 'deny', reason: 'not now' });
    await ticks();
    expect(decided).toBeUndefined();
    let elapsed = 0;
    for (const at of steps) {
      clock.advance(at - elapsed);
      elapsed = at;
      if (at === steps.at(-1)) await vi.waitFor(() => expect(decided).toBeDefined());
      else await ticks();
      if (decided) {
        expect(decided).toMatchObject({ kind: 'deny', code: ErrorCode.HOST_APPROVAL_DENIED });
        return at;
      }
    }
    return undefined;
  } finally {
    await rt.close();
    await db.close();
  }
}

describe('approval poll interval', () => {
  it('reads MHS_APPROVAL_POLL_MS, defaults to 2000 ms, refuses malformed values with CONFIG_INVALID', () => {
    expect(approvalPollMsFromEnv({})).toBe(DEFAULT_APPROVAL_POLL_MS);
    expect(DEFAULT_APPROVAL_POLL_MS).toBe(2000);
    expect(approvalPollMsFromEnv({ [APPROVAL_POLL_ENV_VAR]: ' 150 ' })).toBe(150);
    for (const bad of ['abc', '1.5', '-5', '5', '60001', '1e3']) {
      let err: unknown;
      try {
        approvalPollMsFromEnv({ [APPROVAL_POLL_ENV_VAR]: bad });
      } catch (e) {
        err = e;
      }
      expect(err, bad).toMatchObject({
        code: ErrorCode.HOST_CONFIG_INVALID,
        details: { variable: APPROVAL_POLL_ENV_VAR },
      });
    }
  });

  it('a waiting call sees another process’s decision at the next poll: 2000 ms by default, MHS_APPROVAL_POLL_MS when set', async () => {
    expect(await decisionSeenAfter({}, [150, 1999, 2000])).toBe(2000);
    expect(await decisionSeenAfter({ [APPROVAL_POLL_ENV_VAR]: '150' }, [149, 150])).toBe(150);
  });

  it('a malformed MHS_APPROVAL_POLL_MS refuses to open the runtime', async () => {
    const db = await openTestDb();
    try {
      await expect(
        openOperatorRuntime(db, new SimulatedClock(0), DEFAULT_POLICY, { env: { [APPROVAL_POLL_ENV_VAR]: 'soon' } }),
      ).rejects.toMatchObject({ code: ErrorCode.HOST_CONFIG_INVALID });
    } finally {
      await db.close();
    }
  });
});
