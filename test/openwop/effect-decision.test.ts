// Guarantees (v2 idempotency.md §"Layer 2": Claim, Attempts; src/openwop/effects/effect-decision.ts), as a pure
// decision over stored attempts: no attempt → claim attempt 1; the last completed → reuse its outcome (nothing sent);
// the last released → claim the next attempt; the last claimed and never ended → refused when the effect is not
// idempotent, else the next attempt with the dead one released; the identity never changes between attempts.
import { describe, expect, it } from 'vitest';
import { decideEffect } from '../../src/openwop/effects/effect-decision.js';
import type { EffectAttempt, EffectState } from '../../src/openwop/effects/effect-records.js';

const attempt = (n: number, state: EffectState, outcome?: unknown): EffectAttempt => ({
  id: n,
  runId: 'run_a',
  nodeId: 'n',
  effectId: 'eff-1',
  attempt: n,
  seam: 'mcp.client-call',
  providerKey: null,
  state,
  claimedAt: 't',
  at: 't',
  requestDigest: 'd',
  outcome,
});

describe('the effect decision', () => {
  it('claims the first attempt, reuses a completed one, claims after a release', () => {
    expect(decideEffect([], false)).toEqual({ kind: 'claim', attempt: 1 });
    expect(decideEffect([attempt(1, 'completed', { ok: 1 })], false)).toEqual({
      kind: 'reuse',
      attempt: 1,
      outcome: { ok: 1 },
    });
    expect(decideEffect([attempt(1, 'released')], false)).toEqual({ kind: 'claim', attempt: 2 });
    expect(decideEffect([attempt(1, 'released'), attempt(2, 'completed', 7)], true)).toMatchObject({
      kind: 'reuse',
      attempt: 2,
    });
  });

  it('a claimed, never-ended attempt: refused unless idempotent, then retried with the dead attempt released', () => {
    expect(decideEffect([attempt(1, 'claimed')], false)).toEqual({ kind: 'refuse', attempt: 1 });
    expect(decideEffect([attempt(1, 'claimed')], true)).toEqual({ kind: 'retry', attempt: 2, release: 1 });
    expect(decideEffect([attempt(1, 'escaped')], true)).toEqual({ kind: 'refuse', attempt: 1 });
  });
});
