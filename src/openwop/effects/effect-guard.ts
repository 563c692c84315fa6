/**
 * The Layer-2 guard of one node execution (v2 idempotency.md §"Layer 2: effect identity"): every MCP tool call,
 * model-provider call and remote run the node makes is claimed durably before it is sent and completed (with its outcome) or released
 * after, under an identity stable across re-executions, so the effect surface lists it and a node re-executed after a
 * crash never sends a completed or possibly-performed effect again.
 */
import { ErrorCode, jcs, sha256Hex } from '../../core/index.js';
import { NodeFailure } from '../node-registry.js';
import { decideEffect } from './effect-decision.js';
import type { EffectSeamName, RunEffectRecords } from './effect-records.js';

/** One guarded call. */
export interface EffectCall {
  seam: Exclude<EffectSeamName, 'mhs.governed-call'>;
  /** The call's name within its node execution, stable across re-executions (a checkpoint name, a content key). */
  name: string;
  /** What is asked; its digest must match when a re-executed node reuses a completed attempt. */
  request: unknown;
  /** True when sending again changes nothing outside the run (a model call): a dead attempt is retried. */
  idempotent: boolean;
  /** The identity the provider receives for the effect (an idempotency key it dedupes on); never a credential. */
  providerKey?: string;
  /** How a failed send ended its attempt: `released` (nothing was performed) or `unknown` (it may have been). */
  failed(err: unknown): 'released' | 'unknown';
}

/** The guard a node execution reaches its effects through (`NodeContext.effects`). */
export interface EffectGuard {
  /**
   * Claims the effect, runs `send`, records how it ended, and resolves to its outcome; a completed effect resolves to
   * its stored outcome without `send`.
   * @throws NodeFailure `effect_outcome_unknown` when an earlier attempt was claimed and never ended and the effect is
   *   not idempotent (or another executor holds the claim); `replay_source_missing` in a replay fork; `conflict` when
   *   the name was used for another request. Else what `send` throws.
   */
  perform<T>(call: EffectCall, send: () => Promise<T>): Promise<T>;
}

/** Where a guard belongs. */
export interface GuardScope {
  runId: string;
  nodeId: string;
  activation: number;
}

/**
 * The effect id of a call: the activity recipe (tenant is the host's one, run, node, activation, the call's name)
 * hashed, so every re-execution derives the same id (`eff-` + 32 hex digits, inside the v2 opaque grammar).
 */
export function effectIdOf(scope: GuardScope, seam: string, name: string): string {
  return `eff-${sha256Hex(jcs([scope.runId, scope.nodeId, scope.activation, seam, name])).slice(0, 32)}`;
}

/** The guard of one node execution over `records`; `isReplay` refuses every effect of a replay fork (replay.md rule 5). */
export function effectGuard(
  records: RunEffectRecords,
  scope: GuardScope,
  isReplay: (runId: string) => Promise<boolean>,
): EffectGuard {
  return {
    async perform<T>(call: EffectCall, send: () => Promise<T>): Promise<T> {
      const details = { seam: call.seam, nodeId: scope.nodeId };
      if (await isReplay(scope.runId))
        throw new NodeFailure(ErrorCode.REPLAY_SOURCE_MISSING, 'an effect was reached during a replay and refused', {
          ...details,
          runId: scope.runId,
        });
      const effectId = effectIdOf(scope, call.seam, call.name);
      const requestDigest = sha256Hex(jcs(call.request ?? null));
      const attempts = await records.attempts(effectId);
      const d = decideEffect(attempts, call.idempotent);
      const unknown = (attempt: number): NodeFailure =>
        new NodeFailure(
          ErrorCode.EFFECT_OUTCOME_UNKNOWN,
          `${call.seam} ${effectId} was claimed and never completed: it may have been performed, so it is not sent again`,
          { ...details, effectId, attempt },
        );
      if (d.kind === 'refuse') throw unknown(d.attempt);
      if (d.kind === 'reuse') {
        if (attempts.at(-1)!.requestDigest !== requestDigest)
          throw new NodeFailure(ErrorCode.CONFLICT, `${effectId} completed for another request`, {
            ...details,
            effectId,
          });
        return d.outcome as T;
      }
      const claim = {
        ...scope,
        effectId,
        attempt: d.attempt,
        seam: call.seam,
        requestDigest,
        ...(call.providerKey !== undefined ? { providerKey: call.providerKey } : {}),
      };
      const won = await records.claim(claim, d.kind === 'retry' ? { effectId, attempt: d.release } : undefined);
      if (!won) throw unknown(d.attempt);
      let out: T;
      try {
        out = await send();
      } catch (err) {
        if (call.failed(err) === 'released') await records.settle(effectId, d.attempt, 'released');
        throw err;
      }
      await records.settle(effectId, d.attempt, 'completed', out);
      return out;
    },
  };
}
