import type { RunEffect } from '../run-effects.js';
import { V2_TENANT, bindRunId, toOpaque } from './ids.js';

/** One row of `GET /runs/{runId}/effects` (vendored effect-ledger-projection.schema.json). */
export interface V2EffectRecord {
  effectId: string;
  nodeId: string;
  attempt: number;
  keying: 'activity-recipe';
  providerKey: string;
  state: RunEffect['state'];
  at: string;
}

/**
 * The v2 effect-ledger projection of a run (idempotency.md §"Witness", RFC 0173 §C.2): identity, state and time of
 * each record, never a command's input or receipt. `effectId` is the command id, tenant-bound (`local/cmd-01…`), so
 * a re-read names the same effect and a reconciled retry after a restart stays the one record. `keying` is
 * `activity-recipe`: an MHS device command has no business key, so the host mints its identity once per governed call
 * of a node execution and persists it before the send. `providerKey` is that id as the endpoint receives it
 * (`_mhs.command_id`, the key its receipts answer to): an identifier, no credential.
 */
export function projectRunEffects(engineRunId: string, effects: readonly RunEffect[]): Record<string, unknown> {
  const rows: V2EffectRecord[] = effects.map((e) => ({
    effectId: `${V2_TENANT}/${toOpaque(e.commandId)}`,
    nodeId: e.nodeId,
    attempt: e.attempt,
    keying: 'activity-recipe',
    providerKey: e.commandId,
    state: e.state,
    at: e.at,
  }));
  return { runId: bindRunId(engineRunId), effects: rows };
}
