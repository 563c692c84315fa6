/** The engine's contract: its options, its start report and the `Engine` interface `createEngine` implements. */
import type { Clock, HostError, IdFactory, MhsWireError } from '../core/index.js';
import type { Ledger } from '../ledger/ledger-types.js';
import type { ReadResult } from '../mhs/wire-types.js';
import type { ConnectorRow } from '../mhs/connector-row.js';
import type { BackoffOptions, ReconnectEvent, ReconnectOptions } from '../mhs/reconnect.js';
import type { CallGate } from '../policy/call-gate.js';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { InvokeRequest, InvokeResult, PendingCommand } from './call-types.js';
import type { DeploymentSource } from './deployment-guard.js';
import type { EndpointActor, EndpointActorOptions, EngineEndpoint } from './endpoint-actor.js';
import type { EndpointHandle, RemoteEndpoints } from './endpoint-handle.js';
import type { CollectedEvidence, EngineArtifacts } from './endpoint-evidence.js';
import type { ReconcileResult } from './reconcile.js';
import type { SessionSnapshotStore } from './session-store.js';
import type { RecoveryMarkStore } from './recovery-mark.js';
import type { DisclosureRequest } from './session-disclosure.js';
import type { TaskProgress, TaskResult, TaskSpec } from './task-runner.js';

/** Options of `createEngine` (engine.ts). */
export interface EngineOptions {
  ledger: Ledger;
  clock?: Clock;
  /** Policy and approvals (HOST-032, 043); default {@link defaultCallGate}. */
  gate?: CallGate;
  ids?: IdFactory;
  /**
   * The deployment policy (HOST-090) every endpoint is driven under, read on every decision; default
   * {@link NO_DOCUMENT_DEPLOYMENT} (enabled, hardware devices refused).
   */
  deployment?: DeploymentSource;
  /** Live enablement check per connector (HOST-068); default: attached endpoints count as enabled. */
  isEnabled?: (connectorId: string, endpointId: string) => boolean | Promise<boolean>;
  /** Names the host in session principals (`host:<id>`, HOST-035). */
  hostId?: string;
  sessionTtlMs?: number;
  /** Most commands queued or running per endpoint lane (HOST-082). Default 64. */
  laneMaxPending?: number;
  /** Transport timeout = `deadline_ms` + this (HOST-037). Default 2 000. */
  transportMarginMs?: number;
  adhocIdleMs?: number;
  followLimitMs?: number;
  /** Reconcile an endpoint's unsettled commands as soon as it is attached. Default true. */
  reconcileOnAttach?: boolean;
  spanProcessors?: SpanProcessor[];
  /** Background failures (session heartbeats, ledger writes off the call path). */
  onBackgroundError?: (err: HostError) => void;
  /**
   * Where attached manifests and collected endpoint evidence bundles are stored (HOST-051, 054). When given,
   * `runTask` records each touched endpoint's receipt links and marks it uncollected; `collectPendingEvidence`
   * (and `stop`) export each uncollected endpoint's bundle once (issue 21: a task's cost never grows with history).
   */
  artifacts?: EngineArtifacts;
  /** Backoff of the connections opened by `engine.connect` (default 200 ms doubling to 10 s, unlimited). */
  reconnect?: BackoffOptions;
  /**
   * `engine.connect`: probe idle connections this often (ms) so an HTTP endpoint that went away is seen as
   * disconnected, and reconnected, without waiting for the next call. Default off (the next call finds out).
   */
  probeIntervalMs?: number;
  /** An endpoint that reconnects with another manifest digest: re-admit it (default) or refuse it (HOST-012, 073). */
  onManifestChange?: 'readmit' | 'refuse';
  /**
   * Persists endpoint-session snapshots (`openSessionStore(db)`): `attach` restores an endpoint's sessions, reusing
   * live ones and reopening expired ones on next use (HOST-036).
   */
  sessionStore?: SessionSnapshotStore;
  /** Where start-up recovery begins reading the ledger (`openRecoveryMarkStore(db)`); default: from the start. */
  recoveryMark?: RecoveryMarkStore;
  /** Connection events of every endpoint (disconnected, reconnecting, reconnected, gave-up). */
  onEndpointEvent?: (endpointId: string, e: ReconnectEvent) => void;
  /**
   * Session mode every endpoint actor requests (default `live`). `replay` (a replay run, HOST-085): a session an
   * endpoint opens in another mode is refused with `MHS.HOST.REPLAY_REFUSED` before any command is sent.
   */
  sessionMode?: 'live' | 'replay';
  /**
   * Experimental (HOST-084; reserved in OpenMHS 0.9): run `mhs.composition.run` calls on endpoints that advertise
   * it. Default off: a composition is refused with `MHS.HOST.COMPOSITION_DISABLED` before anything is sent.
   */
  experimentalComposition?: boolean;
  /**
   * Called before a call, task or reconciliation names an endpoint that is not attached: resolves once it is (or
   * cannot be soon). Issue 19: a process that just took an endpoint lease over may still be attaching it when the
   * run it also took over resumes; without it such a call fails `MHS.HOST.ENDPOINT_UNKNOWN` at once.
   */
  awaitEndpoint?: (endpointId: string) => Promise<void>;
  /**
   * Issue 19: a call to an endpoint not attached here (after `awaitEndpoint`) is offered to this; it forwards the call
   * to the process holding the endpoint's lease and returns that outcome, or undefined to make the call here. A
   * forwarded call (`intentFence`) is never forwarded again.
   */
  forward?: (req: InvokeRequest) => Promise<InvokeResult | undefined>;
  /**
   * Issue 19: the endpoints other live processes attach (a shared PostgreSQL store) and how an operation that journals
   * no intent reaches their holder. `send` answers undefined when this process took the endpoint over meanwhile (the
   * operation is then made here).
   */
  remote?: RemoteEndpoints;
}

/** What recovery found on start (HOST-091). */
export interface StartReport {
  scanned: number;
  /** Unsettled commands this engine records `command.unknown` and reconciles as it attaches their endpoints. */
  unsettled: string[];
  /** Unsettled commands left to the live host process that holds their device gates in the store (HOST-091). */
  ownedElsewhere: string[];
  /**
   * Approvals granted since the recovery mark that no intent carries (a call killed between taking its approval
   * and journalling its intent, or one still waiting to journal): the host runtime settles the consumed ones.
   */
  approvalsWithoutIntent: Array<{ approvalId: string; permitId: string | null }>;
}

/** Options of {@link Engine.attach}. */
export interface AttachOptions {
  /** The endpoint-lease fence of its side effects (issue 19; {@link EndpointActorOptions.fence}). */
  fence?: EndpointActorOptions['fence'];
  /** {@link EndpointActorOptions.checkFence}: the fence checked before each session open, heartbeat and close. */
  checkFence?: EndpointActorOptions['checkFence'];
}

/** The engine: endpoint actors, the governed call, tasks, reconciliation. */
export interface Engine {
  /**
   * Scans the ledger: every intent without an outcome becomes `MHS.OUTCOME.UNKNOWN` until reconciled, recorded
   * `command.unknown` when its endpoint is attached here.
   */
  start(): Promise<StartReport>;
  /**
   * Stops every actor. Sessions are closed at their endpoints, unless `keepSessions` (with a `sessionStore`):
   * then they stay open there and the next engine over the same store reuses them.
   */
  stop(opts?: { keepSessions?: boolean }): Promise<void>;
  /** Starts the actor of a connected endpoint; its unsettled commands shut their gates and are reconciled. */
  attach(conn: EngineEndpoint, opts?: AttachOptions): Promise<EndpointActor>;
  /**
   * Connects a connector row with reconnect (backoff, calls fail fast while away) and attaches it: after a lost
   * connection the endpoint comes back by itself, its sessions are reopened on next use and its unsettled commands
   * are reconciled before their devices take another command (HOST-036, 082, 091). Same refusals as `connect()`.
   */
  connect(row: ConnectorRow, opts?: Omit<ReconnectOptions, 'whileAway'>): Promise<EndpointActor>;
  detach(endpointId: string): Promise<void>;
  /**
   * Issue 19: after this process took `endpointId`'s lease over from `former`, adopts the device gates `former`
   * holds on it and reconciles their commands by `command_id` (HOST-091) before it returns.
   */
  adoptFrom(endpointId: string, former: string): Promise<void>;
  endpoint(endpointId: string): EndpointActor | undefined;
  endpoints(): EndpointActor[];
  /**
   * The endpoint as tasks, tool surfaces, reads and evidence use it: attached here (after `awaitEndpoint`), else
   * attached by another live process (issue 19: its tool calls go through that process), else
   * `MHS.HOST.ENDPOINT_UNKNOWN`. The one place that decides where an endpoint is reached.
   */
  handle(endpointId: string): Promise<EndpointHandle>;
  /** Every endpoint reachable from here: the attached ones, then those other live processes attach (issue 19). */
  handles(): Promise<EndpointHandle[]>;
  /** Whether the experimental composition flag is on (HOST-084; {@link EngineOptions.experimentalComposition}). */
  readonly experimentalComposition: boolean;
  /** The governed call; see {@link governedCall} for its codes. */
  invoke(req: InvokeRequest): Promise<InvokeResult>;
  runTask(
    spec: TaskSpec,
    opts?: { onProgress?: (p: TaskProgress) => void; signal?: AbortSignal; disclosure?: DisclosureRequest },
  ): Promise<TaskResult>;
  /**
   * Reconciles one command, or every unsettled command of an endpoint/device, or all. A command the endpoint has
   * no record of before its deadline stays `unknown` with `retryAt`; with `untilSettled` (one command) the call
   * waits until then and reconciles again, so it never concludes `not_executed` early (issue 16).
   */
  reconcile(sel?: {
    commandId?: string;
    endpointId?: string;
    deviceId?: string;
    untilSettled?: boolean;
  }): Promise<ReconcileResult[]>;
  /** Unsettled commands (in flight, running, unknown). */
  pending(): PendingCommand[];
  /**
   * `mhs__read` (a read: no gate, no intent). Refused under the deployment policy (HOST-090) with
   * `MHS.AUTH.DISABLED` / `MHS.AUTH.HARDWARE_DISABLED` before anything is sent.
   */
  read(endpointId: string, deviceId: string, resource?: string): Promise<ReadResult>;
  /**
   * Exports the evidence bundle of one attached endpoint (or of each) with `mhs__evidence`, stores it and
   * records `evidence.export` (HOST-050, 051). Throws the first failure.
   */
  collectEvidence(endpointId?: string): Promise<CollectedEvidence[]>;
  /**
   * Collects the bundle of every endpoint a task touched since its bundle was last collected, once each (call before
   * an export); one another process attaches through that process (issue 19), unless `attachedOnly` (at stop). A
   * failure is returned for that endpoint (and reported), never dropped.
   */
  collectPendingEvidence(opts?: {
    attachedOnly?: boolean;
  }): Promise<Array<CollectedEvidence | { endpointId: string; error: MhsWireError }>>;
}
