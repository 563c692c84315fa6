import type { Ledger, LedgerEntry } from '../ledger/ledger-types.js';
import { FINAL_STATUSES } from '../mhs/wire-types.js';
import type { Receipt } from '../mhs/wire-types.js';
import type { PendingCommand } from './call-types.js';

/** What the ledger says about commands when the host starts (HOST-070, 091). */
export interface RecoveryScan {
  /** Every `command.intent` without an outcome: each becomes `MHS.OUTCOME.UNKNOWN` until reconciled. */
  unsettled: PendingCommand[];
  /** Permits already sent once; never sent again (HOST-070). */
  usedPermits: Set<string>;
  scanned: number;
}

const SETTLING = new Set(['command.not_sent', 'error']);

/**
 * Reads the ledger and returns the commands whose intent has no outcome: no final receipt, no
 * `command.not_sent`, no endpoint fault, no settling `reconcile`. Read-only; the engine records and reconciles.
 */
export async function scanLedger(ledger: Ledger): Promise<RecoveryScan> {
  const entries: LedgerEntry[] = await ledger.range(0);
  const intents = new Map<string, LedgerEntry>();
  const settled = new Set<string>();
  const lastStatus = new Map<string, Receipt>();
  const usedPermits = new Set<string>();
  for (const e of entries) {
    const cmd = typeof e.command_id === 'string' ? e.command_id : undefined;
    if (!cmd) continue;
    if (e.kind === 'command.intent') {
      intents.set(cmd, e);
      if (typeof e.permit_id === 'string') usedPermits.add(e.permit_id);
    } else if (SETTLING.has(e.kind)) settled.add(cmd);
    else if (e.kind === 'receipt') {
      const r = e.receipt as Receipt | undefined;
      if (r) lastStatus.set(cmd, r);
      if (r && FINAL_STATUSES.has(r.status)) settled.add(cmd);
    } else if (e.kind === 'reconcile' && (e.outcome === 'receipt' || e.outcome === 'not_executed')) settled.add(cmd);
  }
  const unsettled: PendingCommand[] = [];
  for (const [cmd, e] of intents) {
    if (settled.has(cmd)) continue;
    const last = lastStatus.get(cmd);
    unsettled.push({
      commandId: cmd,
      endpointId: String(e.endpoint_id),
      deviceId: String(e.device_id),
      capabilityId: String(e.capability_id),
      tool: String(e.tool),
      sessionId: String(e.session_id),
      inputDigest: String(e.input_digest),
      input: e.input && typeof e.input === 'object' ? (e.input as Record<string, unknown>) : null,
      deadlineMs: typeof e.deadline_ms === 'number' ? e.deadline_ms : 5_000,
      effectful: e.effect !== 'read',
      operationId: last?.operation_id ?? null,
      traceparent: typeof e.traceparent === 'string' ? e.traceparent : null,
      taskId: typeof e.task_id === 'string' ? e.task_id : null,
      parentSeq: typeof e.parent_seq === 'number' ? e.parent_seq : null,
      reason: 'unknown',
    });
  }
  return { unsettled, usedPermits, scanned: entries.length };
}
