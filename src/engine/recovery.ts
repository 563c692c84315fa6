import { GATE_OWNER, ownerAlive } from '../ledger/device-gates.js';
import type { DurableLedger, Ledger, LedgerAppend, LedgerEntry } from '../ledger/ledger-types.js';
import { settlesCommand } from '../ledger/gate-projection.js';
import type { Receipt } from '../mhs/wire-types.js';
import type { PendingCommand } from './call-types.js';
import type { RecoveryMarkStore } from './recovery-mark.js';

/** What the ledger says about commands when the host starts (HOST-070, 091). */
export interface RecoveryScan {
  /** Every `command.intent` without an outcome: each becomes `MHS.OUTCOME.UNKNOWN` until reconciled. */
  unsettled: PendingCommand[];
  /** Permits already sent once; never sent again (HOST-070). */
  usedPermits: Set<string>;
  scanned: number;
  /**
   * Approvals granted (and permits issued for them) since `fromSeq` that no `command.intent` carries and that were
   * not recorded `not_executed`: each was taken by a call that never journalled its intent, or is still waiting for
   * its call. The caller settles the ones its approval store holds `consumed` ({@link settleInterruptedApprovals}).
   */
  approvalsWithoutIntent: Array<{ approvalId: string; permitId: string | null }>;
  /**
   * Where the next start may begin reading: the seq of the oldest unsettled intent, or one past the last entry read
   * when every intent is settled.
   */
  nextFrom: number;
}

/**
 * Reads the ledger from `fromSeq` (a {@link RecoveryMarkStore} mark: every intent below it is settled) and returns
 * the commands whose intent has no outcome: no final receipt, no `command.not_sent`, no endpoint fault, no settling
 * `reconcile`. Outcomes of intents below `fromSeq` are ignored. Read-only; the engine records and reconciles.
 * Permits sent before the mark are not listed: the permit store's atomic claim already refuses them (HOST-070).
 */
export async function scanLedger(ledger: Ledger, fromSeq = 0): Promise<RecoveryScan> {
  const entries: LedgerEntry[] = await ledger.range(fromSeq);
  const intents = new Map<string, LedgerEntry>();
  const settled = new Set<string>();
  const lastStatus = new Map<string, Receipt>();
  const notBefore = new Map<string, LedgerEntry>();
  const usedPermits = new Set<string>();
  const approvals = new Approvals();
  for (const e of entries) {
    approvals.note(e);
    const cmd = typeof e.command_id === 'string' ? e.command_id : undefined;
    if (!cmd) continue;
    if (e.kind === 'command.intent') {
      intents.set(cmd, e);
      if (typeof e.permit_id === 'string') usedPermits.add(e.permit_id);
      continue;
    }
    if (e.kind === 'receipt' && e.receipt) lastStatus.set(cmd, e.receipt as Receipt);
    if (e.kind === 'reconcile' && typeof e.not_before === 'string') notBefore.set(cmd, e);
    if (settlesCommand(e)) settled.add(cmd);
  }
  const unsettled: PendingCommand[] = [];
  let nextFrom = entries.length ? entries[entries.length - 1]!.seq + 1 : fromSeq;
  for (const [cmd, e] of intents) {
    if (settled.has(cmd)) continue;
    nextFrom = Math.min(nextFrom, e.seq);
    unsettled.push(pendingFromIntent(e, lastStatus.get(cmd), notBefore.get(cmd)));
  }
  return {
    unsettled,
    usedPermits,
    scanned: entries.length,
    nextFrom,
    approvalsWithoutIntent: approvals.withoutIntent(),
  };
}

/**
 * Start-up recovery in O(unsettled) (issue 21 item 4): on a store whose writer keeps the unsettled side tables, reads
 * only the unsettled intents (their own entries, by the command index) and the open approvals, never the whole
 * ledger; the result is what {@link scanLedger} finds over the whole ledger. `scanned` counts the entries read.
 * Permits of settled intents are not listed: the permit store's atomic claim refuses them (HOST-070). A ledger
 * without the tables (an in-memory one) is scanned from `mark` instead, and the mark is moved on.
 */
export async function recoveryScan(ledger: Ledger, mark?: RecoveryMarkStore): Promise<RecoveryScan> {
  const d = ledger as Partial<DurableLedger>;
  if (typeof d.unsettledIntents !== 'function' || typeof d.openApprovals !== 'function') {
    const scan = await scanLedger(ledger, mark ? await mark.get() : 0);
    await mark?.set(scan.nextFrom);
    return scan;
  }
  const rows = await d.unsettledIntents();
  const unsettled: PendingCommand[] = [];
  const usedPermits = new Set<string>();
  let scanned = 0;
  for (const r of rows) {
    const entries = await ledger.byCommand(r.command_id);
    scanned += entries.length;
    const p = unsettledCommand(entries);
    if (!p) continue;
    unsettled.push(p);
    const permit = entries.find((e) => e.kind === 'command.intent')?.permit_id;
    if (typeof permit === 'string') usedPermits.add(permit);
  }
  const approvalsWithoutIntent = await d.openApprovals();
  const nextFrom = rows.length ? (rows[0] as { seq: number }).seq : (await ledger.head()).seq + 1;
  await mark?.set(nextFrom);
  return { unsettled, usedPermits, scanned, nextFrom, approvalsWithoutIntent };
}

/** The approvals a ledger range grants, and which of them an intent carries (HOST-041, 070). */
class Approvals {
  private readonly granted = new Map<string, string | null>();
  private readonly done = new Set<string>();

  note(e: LedgerEntry): void {
    const id = typeof e.approval_id === 'string' ? e.approval_id : null;
    if (!id) return;
    if (e.kind === 'approval' && e.event === 'decided' && e.decision === 'approve' && !this.granted.has(id))
      this.granted.set(id, null);
    else if (e.kind === 'permit.issue' && typeof e.permit_id === 'string') this.granted.set(id, e.permit_id);
    else if (e.kind === 'command.intent' || (e.kind === 'approval' && e.event === 'not_executed')) this.done.add(id);
  }

  withoutIntent(): Array<{ approvalId: string; permitId: string | null }> {
    return [...this.granted]
      .filter(([id]) => !this.done.has(id))
      .map(([approvalId, permitId]) => ({ approvalId, permitId }));
  }
}

/** This process's name on the gates it claims, and whether another owner is running (pid here, lease elsewhere). */
export function gateOwnership(ledger: Ledger): {
  self: string;
  running: (owner: string) => Promise<boolean | null>;
} {
  const d = ledger as Partial<DurableLedger>;
  return {
    self: d.owner ?? GATE_OWNER,
    running: (owner) =>
      typeof d.ownerRunning === 'function' ? d.ownerRunning(owner) : Promise.resolve(ownerAlive(owner)),
  };
}

/**
 * Commands whose device gate in the store belongs to another host process still running (HOST-091), on this machine
 * (by pid) or on another sharing the store (by its lease):
 * that process is waiting for their outcome, so start-up recovery leaves them to it instead of recording them
 * `command.unknown` and reconciling them under its feet. Their gates stay shut for everyone else meanwhile. A gate
 * whose process is gone is taken over first; one another starting process took over just before is left to it.
 */
export async function ownedElsewhere(ledger: Ledger): Promise<Set<string>> {
  const d = ledger as Partial<DurableLedger>;
  if (typeof d.deviceGates !== 'function') return new Set();
  // A store that predates the table and cannot be written has none: nothing can hold a gate there.
  const gates = await d.deviceGates().catch(() => []);
  const theirs = new Set<string>();
  const { self, running } = gateOwnership(ledger);
  for (const g of gates) {
    if (g.owner === self) continue;
    const alive = await running(g.owner);
    if (alive === true) theirs.add(g.command_id);
    else if (alive === false && typeof d.takeOverGate === 'function' && !(await d.takeOverGate(g.command_id, g.owner)))
      theirs.add(g.command_id);
  }
  return theirs;
}

/**
 * The unsettled command a journaled intent stands for (its last receipt, if any, gives the operation id; the
 * `not_before` of its last waiting `reconcile`, if any, the re-armed reconciliation: deadlines are data, issue 16).
 */
export function pendingFromIntent(e: LedgerEntry, last?: Receipt, waiting?: LedgerEntry): PendingCommand {
  const reconcileAt = typeof waiting?.not_before === 'string' ? Date.parse(waiting.not_before) : NaN;
  return {
    commandId: String(e.command_id),
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
    ...(typeof e.run_id === 'string' ? { runId: e.run_id } : {}),
    reason: 'unknown',
    ...(Number.isFinite(reconcileAt) ? { reconcileAt } : {}),
  };
}

/** The command of `entries` (one command's entries, in order) when its intent is journaled and unsettled. */
export function unsettledCommand(entries: readonly LedgerEntry[]): PendingCommand | null {
  const intent = entries.find((e) => e.kind === 'command.intent');
  if (!intent || entries.some(settlesCommand)) return null;
  const last = entries.filter((e) => e.kind === 'receipt' && e.receipt).at(-1)?.receipt as Receipt | undefined;
  const waiting = entries.filter((e) => e.kind === 'reconcile' && typeof e.not_before === 'string').at(-1);
  return pendingFromIntent(intent, last, waiting);
}

/** The `command.unknown` entry of a command whose outcome this process has to settle (HOST-091). */
export function unknownEntry(p: PendingCommand, reason: string, extra: Record<string, unknown> = {}): LedgerAppend {
  return {
    kind: 'command.unknown',
    command_id: p.commandId,
    endpoint_id: p.endpointId,
    device_id: p.deviceId,
    reason,
    ...extra,
    ...(p.traceparent ? { traceparent: p.traceparent } : {}),
  };
}
