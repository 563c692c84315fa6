import type { Clock, HostError, IdFactory } from '../core/index.js';
import type { Db } from '../ledger/db.js';
import type { Ledger } from '../ledger/ledger-types.js';
import type { Receipt } from '../mhs/wire-types.js';
import type { CallGate } from '../policy/call-gate.js';
import type { CommandActor } from './command-actor.js';
import type { DisclosureRequest, SessionDisclosure, SessionDisclosures } from './session-disclosure.js';
import type { InputSchemaCache } from './schema-cache.js';
import type { ReceiptBatcher } from './receipt-batcher.js';
import type { EngineTracer, TraceScope } from './tracing.js';

/** A capability call as callers (API, CLI, OpenWOP nodes, model tool calls) hand it to the engine. */
export interface InvokeRequest {
  endpointId: string;
  deviceId: string;
  capabilityId: string;
  /** The capability input; any `_mhs` in it is stripped: control fields are the host's (wire contract §4). */
  input: Record<string, unknown>;
  /** Session scope: calls of one task share its sessions (HOST-034). Default: an ad-hoc scope. */
  taskId?: string;
  /** Capabilities the task's session on this device needs; default the called one (HOST-034). */
  sessionCapabilities?: string[];
  /** The parent action of a multi-endpoint task (HOST-081); `step` is the command's index in the task. */
  parentAction?: { taskId: string; seq: number; step?: number };
  /** Trace to continue: a started scope or an incoming W3C `traceparent`. */
  trace?: TraceScope | { traceparent: string; tracestate?: string };
  runId?: string;
  nodeId?: string;
  /**
   * The run-lease fence of the OpenWOP run making the call (issue 19; a shared PostgreSQL store): checked in the
   * transaction that journals the command's intent, so a process that lost the run sends no new command.
   */
  runFence?: (t: Db) => Promise<void>;
  /**
   * Issue 19, a call forwarded by another process: claims its `endpoint_requests` row in the intent's transaction
   * (after the endpoint and run fences), so the forwarded call is sent at most once.
   */
  intentFence?: (t: Db, commandId: string) => Promise<void>;
  expectedRevision?: number;
  resource?: string;
  /** MHS `deadline_ms`; default the binding's `max_duration_ms`; capped by the manifest's `max_deadline_ms`. */
  deadlineMs?: number;
  signal?: AbortSignal;
  /**
   * Who asked for the call, from the caller's authenticated connection (a gateway token, `local` stdio), never
   * from the input; written on the `command.intent`.
   */
  principal?: CallPrincipal;
  /** Stable key of the asking step: a later call with the same key reuses its open approval (HOST-041). */
  approvalKey?: string;
  /** Aborts only the wait for an operator's approval (the call then fails `MHS.HOST.APPROVAL_REQUIRED`, still pending). */
  approvalSignal?: AbortSignal;
  /** The surface that shows the session's disclosure before its first call (HOST-003); default surface `api`. */
  disclosure?: DisclosureRequest;
}

/** The principal a call is made for. */
export interface CallPrincipal {
  kind: 'agent' | 'human' | 'system';
  id: string;
  name?: string;
}

/** How a governed call ended, with the FULL receipt (HOST-033, 072). */
export interface InvokeResult {
  commandId: string;
  /** `final`: completed/rejected/failed, gate reopened; `running`/`unknown`: the gate stays shut (HOST-091). */
  outcome: 'final' | 'running' | 'unknown';
  receipt: Receipt;
  traceparent: string;
  intentSeq: number;
  /**
   * Resolves with the ledger seq of the (last) receipt entry once it is durable. The receipt is returned as soon
   * as it arrives; its append is ordered before any later intent (see `recordReceipt`).
   */
  recorded: PromiseLike<number>;
  /** The session's disclosure, when this was its first call (HOST-003, 013, 015). */
  disclosure?: SessionDisclosure;
}

/** Everything the governed call needs besides the endpoint actor. */
export interface CallEnv {
  clock: Clock;
  ledger: Ledger;
  ids: IdFactory;
  gate: CallGate;
  schemas: InputSchemaCache;
  tracer: EngineTracer;
  isEnabled: (connectorId: string, endpointId: string) => boolean | Promise<boolean>;
  /** Permits already sent once: never sent again (HOST-070). */
  usedPermits: Set<string>;
  /** Whether the store's intents already carried a permit this process has not seen (a durable ledger's side table). */
  permitSent?: (permitId: string) => Promise<boolean>;
  /** How much longer than `deadline_ms` the transport waits (HOST-037). */
  transportMarginMs: number;
  /** Longest time to follow a `running` receipt through `mhs__operations` before returning it. */
  followLimitMs?: number;
  /** Group commit of receipts with the next intent. */
  batcher: ReceiptBatcher;
  /** Receipt appends not yet durable; `stop()` waits for them. */
  inflight: Set<Promise<unknown>>;
  onBackgroundError?: (err: HostError) => void;
  /** Unsettled commands the engine tracks for reconciliation; written only by their {@link CommandActor}. */
  pending: Map<string, PendingCommand>;
  /** The actor of each unsettled command (issue 16: one owner per governed command). */
  commands: Map<string, CommandActor>;
  /**
   * Re-arms a reconciliation at `at` (absolute, on `clock`): the endpoint had no record of the command before its
   * deadline had passed, so it may still execute it (issue 16). Deadlines are data: the engine keeps the timer.
   */
  scheduleReconcile?: (p: PendingCommand, at: number) => void;
  /** Drops a re-armed reconciliation of a command that settled. */
  cancelReconcile?: (commandId: string) => void;
  /** The experimental composition flag (HOST-084): off refuses `mhs.composition.run` before anything is sent. */
  composition?: boolean;
  /** Which sessions have been disclosed (HOST-003); without it nothing is disclosed per session. */
  disclosures?: SessionDisclosures;
}

/** A command whose outcome is not settled (intent without a final receipt or a reconciliation). */
export interface PendingCommand {
  commandId: string;
  endpointId: string;
  deviceId: string;
  capabilityId: string;
  tool: string;
  sessionId: string;
  inputDigest: string;
  /** The input as journaled (may be redacted: then no same-id retry is attempted). */
  input: Record<string, unknown> | null;
  deadlineMs: number;
  /**
   * An upper bound of when the command was handed to the transport (ms, host clock): the send itself for a command
   * of this process; for one taken over from a process that is gone, the takeover (every send of that process
   * happened before it died). The intent's time is a lower bound and is never used (issue 16). Until
   * `sentBy + deadlineMs + transportMarginMs` an endpoint with no record of the command may still execute it.
   */
  sentBy?: number;
  effectful: boolean;
  operationId: string | null;
  traceparent: string | null;
  taskId: string | null;
  parentSeq: number | null;
  /** The workflow run the command belongs to (its intent's `run_id`): its receipts carry it too (issue 18). */
  runId?: string;
  reason: 'in_flight' | 'running' | 'unknown';
  /**
   * A reconciliation re-armed for this time (absolute): the endpoint had no record before the deadline had passed.
   * Read back from the `not_before` of its `reconcile` entry after a restart (issue 16: deadlines are data).
   */
  reconcileAt?: number;
  /**
   * Found unsettled by start-up recovery and not yet recorded `command.unknown`: that entry is written when this
   * process attaches the command's endpoint, so a process never records outcomes for endpoints it does not drive.
   */
  recoveredUnrecorded?: boolean;
}
