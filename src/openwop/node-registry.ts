import { ErrorCode, HostError } from '../core/index.js';
import type { Clock } from '../core/index.js';
import type { EffectGuard } from './effects/effect-guard.js';
import type { RecordedExecution } from './replay-outcomes.js';
import type { NodeServices, ServiceName } from './service-family.js';
import type { Db } from '../ledger/db.js';
import type { RunEvent, RunEventInput, WorkflowDefinition, WorkflowNode } from './types.js';

/** Who resolves an interrupt (from the bearer token). */
export interface Caller {
  principal: string;
  name?: string;
  role?: 'client' | 'operator';
}

/** What an interrupt asks for (suspend-request.schema.json without the engine-assigned key). */
export interface InterruptRequest {
  kind: 'approval' | 'clarification' | 'external-event' | 'custom' | 'conversation.exchange';
  data: Record<string, unknown>;
  timeoutMs?: number;
  resumeSchema?: Record<string, unknown>;
  /** Extra fields for the `node.suspended` payload (e.g. `reason`). */
  suspendInfo?: Record<string, unknown>;
  /**
   * Checks a resolution's resume value before it is recorded; raising a HostError refuses it and the interrupt
   * stays pending, unconsumed (e.g. a conversation turn from outside the roster, RFC 0239 §B.3).
   */
  checkResume?(resumeValue: Record<string, unknown>): void;
}

/** How an interrupt ended. */
export type InterruptOutcome =
  | { timedOut: false; resumeValue: Record<string, unknown>; decidedBy: string | null; causationId: string }
  | { timedOut: true; causationId: string };

/** The child-run services `core.subWorkflow` needs from the run manager. */
export interface ChildRuns {
  /** Starts (or, for the same key, finds) a child run; raises `not_found` for an unknown workflow. */
  start(opts: {
    workflowId: string;
    variables: Record<string, unknown>;
    parentRunId: string;
    parentNodeId: string;
    key: string;
    /** Stored on the child run and in its `run.started` (e.g. the parent's causation, for cross-run chains). */
    metadata?: Record<string, unknown>;
    /** W3C traceparent the child run continues (default: the parent run's). */
    traceparent?: string;
  }): Promise<{ runId: string }>;
  /** Resolves when the child run is terminal. */
  settled(runId: string): Promise<{ status: string; variables: Record<string, unknown>; error: unknown }>;
}

/** What a node executor sees. Everything durable goes through it, so a resumed node can pick up. */
export interface NodeContext {
  readonly runId: string;
  readonly node: WorkflowNode;
  /** 1 on the first visit; higher when a loop brings the run back. */
  readonly activation: number;
  /** Inputs resolved from the node's port values. */
  readonly inputs: Record<string, unknown>;
  readonly variables: Readonly<Record<string, unknown>>;
  /** True when this execution continues one that began before a host restart. */
  readonly resumed: boolean;
  /** Events of this node since its last `node.started` (empty on a fresh start). */
  readonly history: readonly RunEvent[];
  /** Aborted when the run is cancelled. */
  readonly signal: AbortSignal;
  /**
   * On a shared PostgreSQL store (issue 19): raises `MHS.HOST.RUN_LEASE_LOST`, inside the caller's transaction, unless
   * this process still holds the run's lease with its token; a side effect journaled under it (an MHS command's
   * intent) is then never sent by a process that lost the run. Absent when one process drives every run.
   */
  readonly runFence?: (t: Db) => Promise<void>;
  readonly clock: Clock;
  /** W3C traceparent of the node span. */
  readonly traceparent: string | undefined;
  /** Appends node-scoped events (nodeId filled in). */
  emit(events: RunEventInput[]): Promise<RunEvent[]>;
  /** Records a value under `name` once; returns the value first recorded (durable across restarts). */
  checkpoint<T>(name: string, value: () => T): Promise<T>;
  /** Suspends on an interrupt until the REST route or the console resolves it, or it times out. */
  interrupt(req: InterruptRequest): Promise<InterruptOutcome>;
  /**
   * Shows a wait decided elsewhere (an MHS approval held by the policy gate) as an interrupt: the run
   * becomes `waiting-*`; a resolution through the REST route is handed to `onResolve` (which raises
   * to refuse it); the node reports the decision with the returned `settled`. Idempotent per key.
   */
  externalInterrupt(
    req: InterruptRequest & { key: string },
    onResolve: (body: Record<string, unknown>, by: Caller) => Promise<void>,
  ): Promise<{ settled(resumeValue: Record<string, unknown>, decidedBy: string | null): Promise<void> }>;
  /** Waits `ms` of clock time measured from the first call (re-armed after a restart). */
  sleep(ms: number): Promise<void>;
  readonly children: ChildRuns;
  /** Outputs of the nodes that had completed when this execution began (by node id). */
  readonly nodeOutputs?: Readonly<Record<string, Record<string, unknown> | undefined>>;
  /** The run's `RunOptions.configurable` (e.g. `escalationThreshold`). */
  readonly configurable?: Readonly<Record<string, unknown>>;
  /** The run's workflow definition (read-only; e.g. `defaults.promptRefs`, RFC 0029 layer 3). */
  readonly workflow?: WorkflowDefinition;
  /** Host service surfaces (RFC 0144): present only when the host installs and advertises the family. */
  readonly aiEnvelope?: NodeServices['aiEnvelope'];
  readonly promptLibrary?: NodeServices['promptLibrary'];
  readonly agentRuntime?: NodeServices['agentRuntime'];
  readonly mcp?: NodeServices['mcp'];
  /**
   * The Layer-2 effect guard of this execution (effects/effect-guard.ts): a model-provider call or a remote run is made
   * through it, so it is claimed before it is sent and answered from its record when the node is re-executed
   * (`ctx.mcp.callTool` is routed through it already). Set by the host.
   */
  readonly effects?: EffectGuard;
}

/** A node's success. `variables` are written to the run's variables (`variable.changed`). */
export interface NodeResult {
  outputs?: Record<string, unknown>;
  variables?: Record<string, unknown>;
  /** Extra fields for the `node.completed` payload (e.g. ledger `seq`/`digest` of a receipt). */
  completedInfo?: Record<string, unknown>;
  /** Ends the node's loop: its edges back into its own cycle do not fire (a dispatch's `terminate`). */
  exitLoop?: boolean;
}

/** An executor for one typeId. Failures are thrown as `NodeFailure` (or any error → internal). */
export interface NodeModule {
  typeId: string;
  /** Problems with the node's config, each with a JSON Pointer relative to the node (`/config/x`). */
  validate?(node: WorkflowNode): Array<{ path: string; message: string }>;
  /** Host service families the executor needs; a host without one fails the node `host_capability_missing`. */
  requires?: readonly ServiceName[];
  /**
   * True for a pure node: in a replay fork it re-executes live (its `ctx.checkpoint` draws are reproduced). Any node
   * not marked pure is side-effecting: a replay fork resolves it from the source run's recorded outcome (replay.ts).
   */
  pure?: boolean;
  /**
   * In a replay fork, called before this side-effecting node resolves from the source's recorded execution `recorded`:
   * raises a NodeFailure to fail the replay instead (e.g. a model that now refuses, RFC 0041 §B; replay.ts).
   */
  replayCheck?(ctx: NodeContext, recorded: RecordedExecution | undefined, sourceRunId: string): Promise<void>;
  /** Raises a HostError to refuse creating a run of a workflow holding this node (nothing is stored or started). */
  admit?(node: WorkflowNode): void;
  execute(ctx: NodeContext): Promise<NodeResult>;
}

/** A node failure with an OpenWOP error code (e.g. `approval_rejected`) and structured details. */
export class NodeFailure extends Error {
  override readonly name = 'NodeFailure';
  constructor(
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
    /** Extra fields for the `node.failed` payload. */
    readonly failedInfo: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** Thrown into executors when the run is cancelled. */
export class RunCancelled extends Error {
  override readonly name = 'RunCancelled';
}

/** typeId → executor. */
export class NodeRegistry {
  private readonly modules = new Map<string, NodeModule>();

  register(...mods: NodeModule[]): this {
    for (const m of mods) this.modules.set(m.typeId, m);
    return this;
  }

  get(typeId: string): NodeModule {
    const m = this.modules.get(typeId);
    if (!m) throw new HostError(ErrorCode.VALIDATION_ERROR, `unknown node typeId ${typeId}`, { typeId });
    return m;
  }

  has(typeId: string): boolean {
    return this.modules.has(typeId);
  }

  typeIds(): string[] {
    return [...this.modules.keys()].sort();
  }
}
