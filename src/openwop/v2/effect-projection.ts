import type { RunEffect } from '../run-effects.js';
import { V2_TENANT, bindRunId, toOpaque } from './ids.js';

/** One row of `GET /runs/{runId}/effects` (vendored effect-ledger-projection.schema.json). */
export interface V2EffectRecord {
  effectId: string;
  nodeId: string;
  attempt: number;
  keying: 'activity-recipe';
  providerKey?: string;
  state: RunEffect['state'];
  at: string;
}

/** An engine effect id (`eff-…`, `cmd_…`) as v2 names it (`local/eff-…`, `local/cmd-…`); one derivation for every reader. */
export function bindEffectId(engineEffectId: string): string {
  return `${V2_TENANT}/${toOpaque(engineEffectId)}`;
}

/**
 * The v2 effect-ledger projection of a run (idempotency.md §"Witness", RFC 0173 §C.2): identity, state and time of
 * each attempt, never a request, reply, receipt or credential. `effectId` is tenant-bound (`local/cmd-01…` for a
 * governed command, `local/eff-…` for an MCP tool call or model call), the same on every read and for every attempt
 * of one effect. `keying` is `activity-recipe`: none of these providers has a business key, so the identity is the
 * host's recipe (tenant, run, node and activation, and the call's ordinal name), minted once and persisted before the
 * send. `providerKey` is a governed command's id as the endpoint receives it (`_mhs.command_id`); an MCP server and a
 * model provider receive no key, so their records carry none.
 */
export function projectRunEffects(engineRunId: string, effects: readonly RunEffect[]): Record<string, unknown> {
  const rows: V2EffectRecord[] = effects.map((e) => ({
    effectId: bindEffectId(e.effectId),
    nodeId: e.nodeId,
    attempt: e.attempt,
    keying: 'activity-recipe',
    ...(e.providerKey !== undefined ? { providerKey: e.providerKey } : {}),
    state: e.state,
    at: e.at,
  }));
  return { runId: bindRunId(engineRunId), effects: rows };
}
