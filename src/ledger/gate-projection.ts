import { FINAL_STATUSES } from '../mhs/wire-types.js';
import type { LedgerAppend } from './ledger-types.js';

/** Why a durable device gate is held (HOST-091): the command's outcome is in flight, running, or unknown. */
export type DurableGateReason = 'in_flight' | 'running' | 'unknown';

/**
 * What one ledger entry does to the device gate of its command (HOST-091). The ledger writer applies it in the
 * entry's own transaction, so the `device_gates` table is a projection of the ledger that every host process on
 * the store sees; start-up recovery reads the same rule from the entries themselves.
 * - `claim`: an effectful `command.intent` shuts its device's gate;
 * - `settle`: a final receipt, `command.not_sent`, an `error` of the command (nothing executed) or a settling
 *   `reconcile` reopens it;
 * - `mark`: a `running`/`accepted`/`unknown` receipt, `command.unknown` or an unsettled `reconcile` keeps it shut.
 */
export type GateEffect =
  | { op: 'claim'; commandId: string; endpointId: string; deviceId: string }
  | { op: 'settle'; commandId: string }
  | { op: 'mark'; commandId: string; reason: DurableGateReason }
  | null;

/** The {@link GateEffect} of `e`; null when it does not concern a command's gate. */
export function gateEffect(e: LedgerAppend): GateEffect {
  const commandId = e['command_id'];
  if (typeof commandId !== 'string') return null;
  switch (e.kind) {
    case 'command.intent': {
      const endpointId = e['endpoint_id'];
      const deviceId = e['device_id'];
      if (e['effect'] === 'read' || typeof endpointId !== 'string' || typeof deviceId !== 'string') return null;
      return { op: 'claim', commandId, endpointId, deviceId };
    }
    case 'command.not_sent':
    case 'error':
      return { op: 'settle', commandId };
    case 'command.unknown':
      return { op: 'mark', commandId, reason: 'unknown' };
    case 'receipt': {
      const status = (e['receipt'] as { status?: unknown } | undefined)?.status;
      if (typeof status !== 'string') return null;
      if (FINAL_STATUSES.has(status as never)) return { op: 'settle', commandId };
      return { op: 'mark', commandId, reason: status === 'unknown' ? 'unknown' : 'running' };
    }
    case 'reconcile':
      if (e['outcome'] === 'receipt' || e['outcome'] === 'not_executed') return { op: 'settle', commandId };
      return { op: 'mark', commandId, reason: e['outcome'] === 'running' ? 'running' : 'unknown' };
    default:
      return null;
  }
}

/** True when `e` settles its command: the outcome is known and the device gate reopens. */
export function settlesCommand(e: LedgerAppend): boolean {
  return gateEffect(e)?.op === 'settle';
}
