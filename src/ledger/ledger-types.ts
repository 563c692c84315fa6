import type { ChainCheck } from '../core/index.js';
import type { Db } from './db.js';
import type { DurableGate } from './device-gates.js';
import type { OpenApproval, UnsettledRow } from './unsettled.js';

/** Entry kinds of the host ledger (issue 4; HOST-050, 092). */
export const LEDGER_KINDS = [
  'genesis',
  'checkpoint',
  'session.open',
  'session.heartbeat',
  'session.close',
  'session.expired',
  'disclosure',
  // A session's disclosure shown on a surface before its first call (HOST-003, 050).
  'disclosure.shown',
  'tool_call',
  'command.intent',
  'command.not_sent',
  'command.unknown',
  'reconcile',
  'approval',
  'permit.issue',
  'permit.revoke',
  // The endpoint refused to issue a permit, or issued one for another digest (issue 20: refusals are evidence).
  'permit.refused',
  'receipt',
  'estop.request',
  'estop.receipt',
  'reset.request',
  'reset.receipt',
  'parent_action',
  'evidence.export',
  'evidence.verify',
  'operator.enable',
  'operator.disable',
  'error',
  'retention.prune',
  // A replay run's start (the plan it replays) and end (its report), HOST-057, 085.
  'replay.start',
  'replay.end',
  // One model turn of an agent run with the provider's own token counts (issue 15; no prompt or answer text).
  'provider.usage',
  // A workflow definition registered or replaced by a principal: its digest and the one it replaced (issue 20).
  'workflow.registered',
] as const;
export type LedgerKind = (typeof LEDGER_KINDS)[number];

/**
 * What a caller appends: a kind plus any JSON fields. Conventional fields, used for lookups:
 * `command_id`, `session_id`, `endpoint_id`, `device_id`, `run_id`, `node_id`, `traceparent`.
 * The ledger adds `seq`, `prev_digest`, `ts` and `digest`.
 */
export interface LedgerAppend {
  kind: LedgerKind;
  [field: string]: unknown;
}

/** A sealed entry: `digest = sha256(JCS(entry without digest) || prev_digest)` (HOST-051). */
export interface LedgerEntry extends LedgerAppend {
  seq: number;
  prev_digest: string;
  ts: string;
  digest: string;
}

/** Options of an append. */
export interface AppendOptions {
  /**
   * Each effectful `command.intent` appended claims its device's gate in the store, atomically with the entry
   * (HOST-091 across host processes). The append fails with `MHS.HOST.DEVICE_GATE_CLOSED`, writing nothing, when
   * another unsettled command holds that gate.
   */
  claimGates?: boolean;
  /**
   * Runs first inside the append's transaction (a savepoint of it) and may refuse the append by raising: the run-lease
   * fence of an OpenWOP run's governed call on a shared store (issue 19), so a process that lost the run journals no
   * new intent. A refusal (`MHS.HOST.RUN_LEASE_LOST`) writes nothing of this append; other appends of the batch commit.
   */
  fence?: (t: Db) => Promise<void>;
}

/**
 * The host ledger. One writer serialises appends; every append is durable before it resolves.
 * Fails with `MHS.HOST.LEDGER_UNAVAILABLE` when the store cannot be written (HOST-093).
 */
export interface Ledger {
  append(entry: LedgerAppend): Promise<LedgerEntry>;
  appendBatch(entries: readonly LedgerAppend[], opts?: AppendOptions): Promise<LedgerEntry[]>;
  head(): Promise<LedgerEntry>;
  range(fromSeq: number, toSeq?: number): Promise<LedgerEntry[]>;
  byCommand(commandId: string): Promise<LedgerEntry[]>;
  bySession(sessionId: string): Promise<LedgerEntry[]>;
  verify(): Promise<ChainCheck>;
}

/** Whether the store can be written (HOST-093); `since` is when this state began. */
export interface LedgerStatus {
  state: 'available' | 'unavailable';
  since: string;
  /** The failure that made it unavailable (kept after recovery for the operator). */
  last_error?: { code: string; message: string; at: string };
}

/**
 * The ledger `openLedger` returns: {@link Ledger} plus the failure surface (HOST-093), redaction
 * (HOST-056) and retention checkpoints.
 */
export interface DurableLedger extends Ledger {
  /** Current availability; the engine refuses new commands while `unavailable`. */
  status(): LedgerStatus;
  /** Calls `fn` on every change of availability; returns the unsubscribe function. */
  onStatus(fn: (s: LedgerStatus) => void): () => void;
  /** Tries a write (without appending an entry); becomes `available` when it succeeds. */
  probe(): Promise<LedgerStatus>;
  /** Redaction paths (JSON Pointers, manifest `redaction.paths`) for entries with this `endpoint_id`. */
  setRedaction(endpointId: string, paths: readonly string[]): void;
  /**
   * Appends inside the caller's transaction `t` (the handle `db.tx` gave, on this ledger's Db): the entries
   * commit or roll back with that transaction.
   */
  appendIn(t: Db, entries: readonly LedgerAppend[], opts?: AppendOptions): Promise<LedgerEntry[]>;
  /** The device gates held in the store (HOST-091), by any host process: all, or one endpoint's. */
  deviceGates(endpointId?: string): Promise<DurableGate[]>;
  /** Every `command.intent` without an outcome, oldest first, from the writer's side table (issue 21 item 4). */
  unsettledIntents(): Promise<UnsettledRow[]>;
  /** Approvals granted that no intent carries and that were not recorded `not_executed`, oldest first. */
  openApprovals(): Promise<OpenApproval[]>;
  /** True when a `command.intent` on this store already carried `permitId` (HOST-070), by any engine or process. */
  permitSent(permitId: string): Promise<boolean>;
  /** Takes over the gate of `commandId` from the process `from` (gone); false when another process already did. */
  takeOverGate(commandId: string, from: string): Promise<boolean>;
  /** The name this host process claims device gates under (`hostname:pid` unless configured). */
  readonly owner: string;
  /**
   * Whether the host process `owner` is running: by pid on this machine, by its lease in the store otherwise; null
   * when nobody can tell (it never held a lease here).
   */
  ownerRunning(owner: string): Promise<boolean | null>;
  /** Ends this process's lease (clean shutdown): hosts elsewhere may take over its gates at once. */
  releaseLease(): Promise<void>;
  /** Appends a `checkpoint` sealing the current head; retention may prune up to it. */
  checkpoint(extra?: Record<string, unknown>): Promise<LedgerEntry>;
  /** The oldest entry kept: genesis, or the checkpoint a prune left first. */
  first(): Promise<LedgerEntry>;
  /** Stops the background probe (call before closing the Db). */
  dispose(): void;
}
