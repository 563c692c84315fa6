import { hostname } from 'node:os';
import { ErrorCode, HostError, isoAt } from '../core/index.js';
import type { Db } from './db.js';
import { gateEffect } from './gate-projection.js';
import type { DurableGateReason, GateEffect } from './gate-projection.js';
import type { LedgerEntry } from './ledger-types.js';

/** A device gate held in the store: one unsettled effectful command per device, seen by every host process. */
export interface DurableGate {
  endpoint_id: string;
  device_id: string;
  command_id: string;
  reason: DurableGateReason;
  /** The host process that journaled the intent: `hostname:pid`. */
  owner: string;
  since: string;
}

/** The process id every claim of this process carries. */
export const GATE_OWNER = `${hostname()}:${process.pid}`;

/**
 * Whether the host process that owns a gate is still running: true or false for a process on this machine, null
 * for one on another machine (a shared PostgreSQL store), which cannot be told from here.
 */
export function ownerAlive(owner: string): boolean | null {
  const at = owner.lastIndexOf(':');
  const pid = Number(owner.slice(at + 1));
  if (at < 0 || owner.slice(0, at) !== hostname() || !Number.isInteger(pid) || pid <= 0) return null;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === 'EPERM';
  }
}

/** Not append-only: a projection the writer keeps in step with the entries (an older store gets it from them). */
export const DEVICE_GATES_DDL = `CREATE TABLE device_gates (
  endpoint_id TEXT NOT NULL,
  device_id TEXT NOT NULL,
  command_id TEXT NOT NULL,
  reason TEXT NOT NULL,
  owner TEXT NOT NULL,
  since TEXT NOT NULL,
  PRIMARY KEY (endpoint_id, device_id)
);`;

/** The error of an intent refused because another command holds its device's gate in the store (HOST-091). */
export function gateHeldError(held: DurableGate): HostError {
  return new HostError(
    ErrorCode.HOST_DEVICE_GATE_CLOSED,
    `device ${held.device_id} on ${held.endpoint_id} has an unsettled command ${held.command_id} (${held.reason}) journaled by host process ${held.owner}`,
    { ...held, durable: true },
    {
      remediation:
        held.reason === 'unknown'
          ? 'Reconcile that command (mhs-host reconcile <endpoint>) before sending a new one.'
          : 'Wait for that command to finish. If its host process is gone, reconcile it: mhs-host reconcile <endpoint>.',
    },
  );
}

/**
 * Shuts the gate of `claim`'s device for its command, in the caller's transaction. Fails with
 * `MHS.HOST.DEVICE_GATE_CLOSED` when another command holds it; claiming again for the same command is a no-op.
 */
export async function claimGate(
  t: Db,
  claim: Extract<GateEffect, { op: 'claim' }>,
  ts: string,
  owner = GATE_OWNER,
): Promise<void> {
  const { changes } = await t.run(
    `INSERT INTO device_gates (endpoint_id, device_id, command_id, reason, owner, since) VALUES (?, ?, ?, 'in_flight', ?, ?)
     ON CONFLICT (endpoint_id, device_id) DO NOTHING`,
    [claim.endpointId, claim.deviceId, claim.commandId, owner, ts],
  );
  if (changes) return;
  const held = await t.get<DurableGate>(
    'SELECT endpoint_id, device_id, command_id, reason, owner, since FROM device_gates WHERE endpoint_id = ? AND device_id = ?',
    [claim.endpointId, claim.deviceId],
  );
  if (held && held.command_id !== claim.commandId) throw gateHeldError(held);
}

/** Applies a settle or mark (claims are taken only by {@link claimGate}, on request). */
export async function projectGate(t: Db, fx: GateEffect): Promise<void> {
  if (fx?.op === 'settle') await t.run('DELETE FROM device_gates WHERE command_id = ?', [fx.commandId]);
  else if (fx?.op === 'mark')
    await t.run('UPDATE device_gates SET reason = ? WHERE command_id = ?', [fx.reason, fx.commandId]);
}

/**
 * Makes this process the owner of `commandId`'s gate, if `from` still owns it: of several processes that find the
 * same orphaned gate, exactly one takes it over (HOST-091). Returns whether this one did.
 */
export async function takeOverGate(db: Db, commandId: string, from: string, to = GATE_OWNER): Promise<boolean> {
  const { changes } = await db.run('UPDATE device_gates SET owner = ? WHERE command_id = ? AND owner = ?', [
    to,
    commandId,
    from,
  ]);
  return changes === 1;
}

/** Every gate held in the store, or those of one endpoint. */
export function heldGates(db: Db, endpointId?: string): Promise<DurableGate[]> {
  const cols = 'SELECT endpoint_id, device_id, command_id, reason, owner, since FROM device_gates';
  return endpointId === undefined
    ? db.all<DurableGate>(`${cols} ORDER BY endpoint_id, device_id`)
    : db.all<DurableGate>(`${cols} WHERE endpoint_id = ? ORDER BY device_id`, [endpointId]);
}

const GATE_KINDS = ['command.intent', 'command.not_sent', 'command.unknown', 'error', 'receipt', 'reconcile'];

/**
 * Builds the table from the entries of a store that predates it: every effectful intent still unsettled holds its
 * device's gate (the first one, if an old store has several on one device). Runs inside the migration.
 */
export async function backfillGates(t: Db): Promise<void> {
  const rows = await t.all<{ line: string }>(
    `SELECT line FROM ledger_entries WHERE kind IN (${GATE_KINDS.map(() => '?').join(', ')}) ORDER BY seq`,
    GATE_KINDS,
  );
  for (const { line } of rows) {
    const e = JSON.parse(line) as LedgerEntry;
    const fx = gateEffect(e);
    if (fx?.op === 'claim')
      await t.run(
        `INSERT INTO device_gates (endpoint_id, device_id, command_id, reason, owner, since) VALUES (?, ?, ?, 'unknown', 'migration', ?)
         ON CONFLICT (endpoint_id, device_id) DO NOTHING`,
        [fx.endpointId, fx.deviceId, fx.commandId, e.ts ?? isoAt(0)],
      );
    else await projectGate(t, fx);
  }
}
