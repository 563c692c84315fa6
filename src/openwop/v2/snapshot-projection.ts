import type { RunSnapshot } from '../snapshot.js';
import { toV2Configurable } from './configurable.js';
import { bindRunId } from './ids.js';
import type { V2Owner } from './owner.js';
import { eraOf } from '../event-log-era.js';

/** The extension seat of this host's snapshot state that v2 has no field for (`extensions.<org>.<name>`). */
export const SNAPSHOT_EXTENSION = 'mhs-host.run';

/**
 * Projects an engine snapshot to the closed v2 `RunSnapshot` (v2 runs.md §Snapshot): bound `runId` and
 * `parentRunId`, `owner`, integer `engineVersion`, the run's stored era key (`stamp`; none reads as 2, persistence.md),
 * and the host fields v2 has no seat for (`lastSequence`, `pendingInterrupts`, `parentNodeId`) under
 * `extensions["mhs-host.run"]` rather than dropped.
 */
export function projectSnapshot(
  s: RunSnapshot,
  owner: V2Owner,
  inputs?: Record<string, unknown>,
  stamp: number | null = null,
): Record<string, unknown> {
  const out: Record<string, unknown> = {
    runId: bindRunId(s.runId),
    workflowId: s.workflowId,
    status: s.status,
    owner,
    eventLogSchemaVersion: eraOf(stamp),
    engineVersion: Number(s.engineVersion),
    nodeStates: s.nodeStates,
    variables: s.variables,
    tags: s.tags,
    metadata: s.metadata,
    configurable: toV2Configurable(s.configurable),
  };
  if (s.currentNodeId !== undefined) out.currentNodeId = s.currentNodeId;
  if (s.startedAt !== undefined) out.startedAt = s.startedAt;
  if (s.completedAt !== undefined) out.completedAt = s.completedAt;
  if (s.error !== undefined) out.error = s.error;
  if (s.agent !== undefined) out.agent = s.agent;
  if (s.runOrchestrator !== undefined) out.runOrchestrator = s.runOrchestrator;
  if (s.metrics !== undefined) out.metrics = s.metrics;
  if (s.channels !== undefined) out.channels = s.channels;
  if (s.parentRunId !== undefined) out.parentRunId = bindRunId(s.parentRunId);
  if (inputs !== undefined) out.inputs = inputs;
  const ext: Record<string, unknown> = { lastSequence: s.lastSequence, pendingInterrupts: s.pendingInterrupts };
  if (s.parentNodeId !== undefined) ext.parentNodeId = s.parentNodeId;
  out.extensions = { [SNAPSHOT_EXTENSION]: ext };
  return out;
}
