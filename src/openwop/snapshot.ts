import { workflowDigest } from './workflow-versions.js';
import { agentIdentities } from './agents/agent-projection.js';
import type { AgentRef } from './agents/agent-script.js';
import { usageMetrics } from './services/provider-usage.js';
import { conversationChannels } from './conversation-channel.js';
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

/** Folds a run's events over its row into a RunSnapshot. */
export function buildSnapshot(run: StoredRun, events: readonly RunEvent[]): RunSnapshot {
  const nodeStates: Record<string, Record<string, unknown>> = {};
  for (const n of run.definition.nodes) nodeStates[n.id] = { status: 'pending', typeId: n.typeId, executions: 0 };
  const pending = new Map<string, { nodeId: string; interruptId: string; kind: string; data: unknown }>();
  for (const e of events) {
    const nodeId = e.nodeId ?? (e.payload.nodeId as string | undefined);
    const st = nodeId ? nodeStates[nodeId] : undefined;
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
        if (nodeId) {
          pending.set(nodeId, {
            nodeId,
            interruptId: e.payload.key as string,
            kind: e.payload.kind as string,
            data: e.payload.data,
          });
        }
        break;
      case 'interrupt.resolved':
        if (nodeId) pending.delete(nodeId);
        break;
    }
  }
  const terminal = run.status === 'completed' || run.status === 'failed' || run.status === 'cancelled';
  const interrupts = terminal ? [] : [...pending.values()];
  const snap: RunSnapshot = {
    runId: run.runId,
    workflowId: run.workflowId,
    workflowDigest: workflowDigest(run.definition),
    status: run.status,
    nodeStates,
    variables: run.variables,
    engineVersion: ENGINE_VERSION,
    eventLogSchemaVersion: EVENT_LOG_SCHEMA_VERSION,
    tags: run.tags,
    metadata: run.metadata,
    configurable: run.configurable,
    lastSequence: events.length ? events[events.length - 1]!.sequence : -1,
    pendingInterrupts: interrupts,
  };
  if (interrupts[0]) snap.currentNodeId = interrupts[0].nodeId;
  if (run.startedAt) snap.startedAt = run.startedAt;
  if (run.completedAt) snap.completedAt = run.completedAt;
  if (run.error) snap.error = run.error;
  if (run.parentRunId) snap.parentRunId = run.parentRunId;
  if (run.parentNodeId) snap.parentNodeId = run.parentNodeId;
  Object.assign(snap, agentIdentities(run.definition, events), usageMetrics(events));
  Object.assign(snap, conversationChannels(run.definition, events));
  return snap;
}
