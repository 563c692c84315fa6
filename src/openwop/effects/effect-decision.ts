/**
 * What an executor may do with an effect, decided from its stored attempts alone (pure; effect-guard.ts does it).
 * v2 idempotency.md Layer 2: the claim is the atomic guard of the effect, so an attempt someone claimed and never
 * ended may have reached the provider; a retried node MUST NOT issue a second external effect, and a retried provider
 * call MUST resolve to the same effect record (the retry counter is not part of the identity).
 */
import type { EffectAttempt } from './effect-records.js';

/** The decision for one call under one effect identity. */
export type EffectDecision =
  /** No attempt yet, or the last one was released (nothing was performed): claim attempt `attempt`. */
  | { kind: 'claim'; attempt: number }
  /** The last attempt completed: answer from its stored outcome, send nothing. */
  | { kind: 'reuse'; attempt: number; outcome: unknown }
  /**
   * The last attempt is claimed and never ended (its executor died mid-call) and the effect is idempotent (a model
   * call changes nothing outside the run): release that attempt and claim the next under the same identity.
   */
  | { kind: 'retry'; attempt: number; release: number }
  /** The last attempt is claimed and the effect is not idempotent: its outcome is unknown, send nothing. */
  | { kind: 'refuse'; attempt: number };

/** Decides from `attempts` (oldest first) of one effect whether, and as which attempt, the call may be made. */
export function decideEffect(attempts: readonly EffectAttempt[], idempotent: boolean): EffectDecision {
  const last = attempts.at(-1);
  if (!last) return { kind: 'claim', attempt: 1 };
  switch (last.state) {
    case 'completed':
      return { kind: 'reuse', attempt: last.attempt, outcome: last.outcome };
    case 'released':
      return { kind: 'claim', attempt: last.attempt + 1 };
    case 'claimed':
      return idempotent
        ? { kind: 'retry', attempt: last.attempt + 1, release: last.attempt }
        : { kind: 'refuse', attempt: last.attempt };
    default:
      // `escaped` is never written by this host; treat it as an unknown outcome.
      return { kind: 'refuse', attempt: last.attempt };
  }
}
