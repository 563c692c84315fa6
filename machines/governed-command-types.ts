/**
 * Types of the governed-command machine (`machines/governed-command.ts`, issue 16 item 1): its state, the events
 * the engine feeds it (each the observed result of some I/O) and the effects it decides (data the engine runs).
 */

/** MHS receipt statuses (wire contract §6); `completed`, `rejected`, `failed` are final. */
export type CommandReceiptStatus = 'accepted' | 'running' | 'completed' | 'rejected' | 'failed' | 'unknown';

/** The final receipt statuses. */
export const FINAL_RECEIPT_STATUSES: ReadonlySet<CommandReceiptStatus> = new Set(['completed', 'rejected', 'failed']);

/**
 * Where a command is: validated → authorised → journalled → sent → running → settled | unknown → reconciling →
 * settled. `journalled` starts when the intent is handed to the ledger (its device gate shuts then); `intentDurable`
 * says whether the append committed. `unknown` and `running` wait for a reconciliation (or a poll).
 */
export type CommandStatus =
  'validated' | 'authorised' | 'journalled' | 'sent' | 'running' | 'unknown' | 'reconciling' | 'settled';

/** How a settled command ended. */
export type CommandSettlement =
  /** Refused before any intent (policy, approval, a shut gate): nothing journalled, nothing sent. */
  | { kind: 'refused'; code: string }
  /** Journalled (or not durably) but never sent: the intent failed, or the transport failed before sending. */
  | { kind: 'not_sent'; code: string }
  /** The endpoint answered with a fault: nothing executed (wire contract §4). */
  | { kind: 'fault'; code: string }
  /** A final receipt (from the call, a poll or a reconciliation). */
  | { kind: 'receipt'; status: CommandReceiptStatus; via: 'call' | 'reconcile' }
  /** Reconciled: the endpoint had no record once the deadline plus the transport margin had passed. */
  | { kind: 'not_executed' };

/** The governed command's state; plain JSON, so a persisted copy restores it exactly. */
export interface CommandState {
  status: CommandStatus;
  /** Host-allocated when the intent is journalled; null before. */
  commandId: string | null;
  deviceId: string;
  /** Reads take no device gate (HOST-091). */
  effectful: boolean;
  permitId: string | null;
  /** The `command.intent` append committed (HOST-093: only then is anything sent). */
  intentDurable: boolean;
  /** `deadline_ms` sent with the command. */
  deadlineMs: number;
  /** How much longer than the deadline the transport waits (HOST-037); also the margin of the not-executed rule. */
  marginMs: number;
  /**
   * When the command was handed to the transport (host clock); for a command recovered from an earlier process, an
   * upper bound of that (its takeover, after that process died), never the intent's time (a lower bound). Null:
   * not sent yet.
   */
  sentAt: number | null;
  /**
   * Before this time an endpoint with no record of the command may still execute it (issue 16): `sentAt +
   * deadlineMs + marginMs`. Null until known (then the first reconciliation fixes it from its own time).
   */
  settleAt: number | null;
  /** A reconciliation re-armed for this time (absolute): data, so a restored host re-arms it. */
  reconcileAt: number | null;
  operationId: string | null;
  /** The last receipt status seen, if any. */
  lastStatus: CommandReceiptStatus | null;
  /**
   * When the reconciliation in progress asked the endpoint: its "no record" is true as of then, not as of the
   * reply, so the deadline rule is decided on this time.
   */
  askedAt: number | null;
  /** Where to go back to when a reconciliation could not ask the endpoint. */
  resumeTo: 'unknown' | 'running' | null;
  outcome: CommandSettlement | null;
}

/** What creates a command: the validated call. */
export interface CommandInit {
  deviceId: string;
  effectful: boolean;
  deadlineMs: number;
  marginMs: number;
}

/** Why a device gate is shut (HOST-091), the engine's {@link GateReason} values. */
export type CommandGateReason = 'in_flight' | 'running' | 'unknown';

/** The device gate as derived from the command's state. */
export type CommandGate = { status: 'open' } | { status: 'shut'; reason: CommandGateReason };

/** The permit as derived from the command's state (HOST-070). */
export type CommandPermit =
  | { status: 'none' }
  /** Issued for this command, not sent yet. */
  | { status: 'issued'; permitId: string }
  /** Sent once with a durable intent: never sent again. */
  | { status: 'used'; permitId: string }
  /** The command was refused or not sent before its intent was durable: the permit is revoked. */
  | { status: 'revoked'; permitId: string };

/** Events: what the engine observed. Each carries the host clock time `at` where time matters. */
export type CommandEvent =
  | { type: 'authorise'; permitId: string | null }
  | { type: 'refuse'; code: string }
  | { type: 'journal'; commandId: string; at: number }
  | { type: 'journal.done' }
  | { type: 'journal.failed'; code: string }
  | { type: 'sent'; at: number }
  /** Nothing left the host (pre-send timeout, rate limit, a disconnect with `sent: false`). */
  | { type: 'reply.presend'; code: string }
  | { type: 'reply.fault'; code: string }
  /** A receipt of this command: the call's answer, or a poll of `mhs__operations` while running. */
  | { type: 'reply.receipt'; status: CommandReceiptStatus; operationId?: string | null }
  /** The request left and no usable answer came back (timeout, lost reply, disconnect, an unrecordable reply). */
  | { type: 'reply.lost'; code: string }
  /** Following a running command ended without a final receipt (the follow limit, the caller gave up). */
  | { type: 'follow.ended' }
  /** A receipt could not be made durable: the outcome is unknown again until reconciled. */
  | { type: 'record.failed' }
  | { type: 'reconcile'; at: number }
  | { type: 'reconcile.no_record'; at: number }
  | {
      type: 'reconcile.receipt';
      status: CommandReceiptStatus;
      operationId?: string | null;
      at: number;
    }
  /** The endpoint could not be asked (transport, policy): nothing learned. */
  | { type: 'reconcile.failed'; code: string }
  /** A host restart restored this state: in-flight work is lost, timers are gone. */
  | { type: 'restore'; at: number; reason?: 'recovered_on_start' | 'owner_gone' };

/** Effects: what the engine does for a decision. None is executed by the machine. */
export type CommandEffect =
  | { type: 'gate.shut'; deviceId: string; commandId: string; reason: CommandGateReason }
  | { type: 'gate.open'; deviceId: string; commandId: string }
  | { type: 'journalIntent'; commandId: string }
  | { type: 'permit.used'; permitId: string }
  | { type: 'permit.revoke'; permitId: string; code: string }
  | { type: 'send'; commandId: string; deadlineMs: number; timeoutMs: number }
  | { type: 'recordReceipt'; commandId: string; status: CommandReceiptStatus }
  | { type: 'pollOperation'; commandId: string; operationId: string | null }
  | { type: 'recordNotSent'; commandId: string; code: string }
  | { type: 'recordFault'; commandId: string; code: string }
  | { type: 'recordUnknown'; commandId: string; reason: string }
  | { type: 'queryOperations'; commandId: string }
  | {
      type: 'recordReconcile';
      commandId: string;
      outcome: 'receipt' | 'not_executed' | 'running' | 'unknown';
      /** For `unknown` after "no record" before the deadline: when it may be concluded. */
      notBefore?: number;
    }
  | { type: 'scheduleReconcile'; commandId: string; at: number }
  | { type: 'cancelReconcile'; commandId: string };
