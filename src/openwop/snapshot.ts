import { workflowDigest } from './workflow-versions.js';
import { AgentIdentityFold } from './agents/agent-projection.js';
import type { AgentRef } from './agents/agent-script.js';
import { UsageFold } from './services/provider-usage.js';
import { ChannelFold } from './conversation-channel.js';
import { ENGINE_VERSION, EVENT_LOG_SCHEMA_VERSION } from './store.js';
import type { StoredRun } from './store.js';
import type { RunError, RunEvent, RunStatus } from './types.js';

/** The projected run state served at `GET /v1/runs/{runId}` (run-snapshot.schema.json). */
export interface RunSnapshot {
  runId: string;
  workflowId: string;
  /** Digest of the definition this run started with and keeps executing (issue 20; workflow-versions.ts). */
  workflowDigest: string;
  status: RunStatus;
  currentNodeId?: string;
  startedAt?: string;
  completedAt?: string;
  nodeStates: Record<string, Record<string, unknown>>;
  variables: Record<string, unknown>;
  error?: RunError;
  engineVersion: string;
  eventLogSchemaVersion: number;
  tags: string[];
  metadata: Record<string, unknown>;
  configurable: Record<string, unknown>;
  /** Host fields (the snapshot schema allows additional properties). */
  parentRunId?: string;
  parentNodeId?: string;
  lastSequence: number;
  pendingInterrupts: Array<{ nodeId: string; interruptId: string; kind: string; data: unknown }>;
  /** Multi-agent identities (agent-ref.schema.json), when the run has agent events. */
  agent?: AgentRef;
  runOrchestrator?: AgentRef;
  /** `metrics.openwopCost` token rollup of the run's `provider.usage` events (RFC 0026), when it has any. */
  metrics?: Record<string, unknown>;
  /** The run's child runs (sub-workflows, dispatched workers), when it has any. */
  childRuns?: Array<{ runId: string; workflowId: string; status: RunStatus; parentNodeId?: string }>;
  /** Typed channels the run writes (the conversation transcript of a `core.conversationGate`). */
  channels?: Record<string, unknown[]>;
}

type PendingView = { nodeId: string; interruptId: string; kind: string; data: unknown };

/**
 * The event-derived part of a run's snapshot, extended one event at a time (issue 21 item 5): a reader keeps it and
 * applies only the events after {@link lastSequence}, so a snapshot costs the events since the last one, with no cap
 * on the log's length. Applying an event at or below `lastSequence` again changes nothing.
 */
export class SnapshotFold {
  readonly nodeStates: Record<string, Record<string, unknown>> = {};
  private readonly pending = new Map<string, PendingView>();
  private readonly agents: AgentIdentityFold;
  private readonly usage = new UsageFold();
  private readonly channels: ChannelFold;
  lastSequence = -1;
  private digest: string | undefined;

  constructor(readonly definition: StoredRun['definition']) {
    for (const n of definition.nodes) this.nodeStates[n.id] = { status: 'pending', typeId: n.typeId, executions: 0 };
    this.agents = new AgentIdentityFold(definition);
    this.channels = new ChannelFold(definition);
  }

  apply(e: RunEvent): void {
    if (e.sequence <= this.lastSequence) return;
    this.lastSequence = e.sequence;
    this.agents.apply(e);
    this.usage.apply(e);
    this.channels.apply(e);
    const nodeId = e.nodeId ?? (e.payload.nodeId as string | undefined);
    const st = nodeId ? this.nodeStates[nodeId] : undefined;
    switch (e.type) {
      case 'node.started':
        if (st) {
          st.status = 'running';
          st.executions = (st.executions as number) + 1;
          st.startedAt = e.timestamp;
          delete st.outputs;
          delete st.error;
        }
        break;
      case 'node.completed':
        if (st) Object.assign(st, { status: 'completed', outputs: e.payload.outputs ?? {}, completedAt: e.timestamp });
        break;
      case 'node.failed':
        if (st) Object.assign(st, { status: 'failed', error: e.payload.error, completedAt: e.timestamp });
        break;
      case 'node.skipped':
        if (st) st.status = 'skipped';
        break;
      case 'node.cancelled':
        if (st) st.status = 'cancelled';
        break;
      case 'node.suspended':
        if (st) st.status = 'suspended';
        break;
      case 'node.resumed':
        if (st) st.status = 'running';
        break;
      case 'interrupt.requested':
        // Keyed by interrupt id: a node may have several open at once (an mhs.task's parallel steps).
        if (nodeId) {
          this.pending.set(e.payload.key as string, {
            nodeId,
            interruptId: e.payload.key as string,
            kind: e.payload.kind as string,
            data: e.payload.data,
          });
        }
        break;
      case 'interrupt.resolved':
        if (nodeId) this.pending.delete(e.payload.interruptId as string);
        break;
    }
  }

  /** The RunSnapshot of `run` (its row) with this fold's state; a copy the caller may change. */
  snapshot(run: StoredRun): RunSnapshot {
    const nodeStates: Record<string, Record<string, unknown>> = {};
    for (const [id, st] of Object.entries(this.nodeStates)) nodeStates[id] = { ...st };
    const terminal = run.status === 'completed' || run.status === 'failed' || run.status === 'cancelled';
    const interrupts = terminal ? [] : [...this.pending.values()].map((p) => ({ ...p }));
    const snap: RunSnapshot = {
      runId: run.runId,
      workflowId: run.workflowId,
      // A run's definition never changes (issue 20), so its digest is computed once.
      workflowDigest: (this.digest ??= workflowDigest(this.definition)),
      status: run.status,
      nodeStates,
      variables: run.variables,
      engineVersion: ENGINE_VERSION,
      eventLogSchemaVersion: EVENT_LOG_SCHEMA_VERSION,
      tags: run.tags,
      metadata: run.metadata,
      configurable: run.configurable,
      lastSequence: this.lastSequence,
      pendingInterrupts: interrupts,
    };
    if (interrupts[0]) snap.currentNodeId = interrupts[0].nodeId;
    if (run.startedAt) snap.startedAt = run.startedAt;
    if (run.completedAt) snap.completedAt = run.completedAt;
    if (run.error) snap.error = run.error;
    if (run.parentRunId) snap.parentRunId = run.parentRunId;
    if (run.parentNodeId) snap.parentNodeId = run.parentNodeId;
    Object.assign(snap, this.agents.value(), this.usage.value(), this.channels.value());
    return snap;
  }
}

/** Folds a run's events over its row into a RunSnapshot. */
export function buildSnapshot(run: StoredRun, events: readonly RunEvent[]): RunSnapshot {
  const fold = new SnapshotFold(run.definition);
  for (const e of events) fold.apply(e);
  return fold.snapshot(run);
}
