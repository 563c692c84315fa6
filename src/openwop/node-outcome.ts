import { toHostError } from '../core/index.js';
import { NodeFailure } from './node-registry.js';
import type { NodeResult } from './node-registry.js';
import type { RunError, RunEventInput } from './types.js';
import { causationHostIdOf, causationIdOf } from './causation/causation-link.js';
import type { StoredRun } from './store.js';

/** The `run.started` event of a new run (`causationId`/`causationHostId` of a run caused elsewhere, RFC 0040). */
export function runStartedEvent(run: StoredRun, hostId: string | undefined): RunEventInput {
  return {
    type: 'run.started',
    ...causationIdOf(run.metadata, hostId),
    payload: {
      workflowId: run.workflowId,
      inputs: run.inputs,
      transport: 'rest',
      engineVersion: '1',
      tags: run.tags,
      metadata: run.metadata,
      ...(run.parentRunId ? { parentRunId: run.parentRunId, parentNodeId: run.parentNodeId } : {}),
      ...causationHostIdOf(run.metadata, hostId),
    },
  };
}

/** The `{code, message, details?}` a failed node reports, from whatever its executor threw. */
export function nodeError(err: unknown): RunError {
  if (err instanceof NodeFailure) {
    return {
      code: err.code,
      message: err.message,
      ...(Object.keys(err.details).length ? { details: err.details } : {}),
    };
  }
  const { error: code, message, details } = toHostError(err).toEnvelope();
  return { code, message: message || code, ...(details ? { details } : {}) };
}

/**
 * One `variable.changed` per entry of `changed` against the current `variables`. A node's writes carry its `nodeId`;
 * a write from outside the graph (the conformance variables seam) carries `source` and `changedBy` instead.
 */
export function variableChangedEvents(
  changed: Record<string, unknown>,
  variables: Record<string, unknown>,
  by: { nodeId: string } | { source: string; changedBy: string },
): RunEventInput[] {
  return Object.entries(changed).map(([name, value]) => ({
    type: 'variable.changed',
    ...('nodeId' in by ? { nodeId: by.nodeId } : {}),
    payload: { name, previous: variables[name] ?? null, next: value ?? null, ...by },
  }));
}

/** The events of a successful node: one `variable.changed` per written variable, then `node.completed`. */
export function completionEvents(
  nodeId: string,
  result: NodeResult,
  variables: Record<string, unknown>,
  causationId: string,
): RunEventInput[] {
  const inputs = variableChangedEvents(result.variables ?? {}, variables, { nodeId });
  const { durationMs, ...info } = result.completedInfo ?? {};
  inputs.push({
    type: 'node.completed',
    nodeId,
    causationId,
    payload: {
      ...info,
      nodeId,
      outputs: result.outputs ?? {},
      durationMs,
      ...(result.exitLoop ? { exitLoop: true } : {}),
    },
  });
  return inputs;
}

/** How a run ends, as the actor knows it. */
export type RunEnding =
  | { status: 'completed'; outputs: Record<string, unknown> }
  | { status: 'failed'; error: RunError; nodeId?: string }
  | { status: 'cancelled'; reason: string; by: string; parentRunId?: string };

/** The run's one terminal event (`run.completed` / `run.failed` / `run.cancelled`). */
export function terminalEvent(end: RunEnding, durationMs: number): RunEventInput {
  switch (end.status) {
    case 'completed':
      return { type: 'run.completed', payload: { outputs: end.outputs, durationMs } };
    case 'failed':
      return {
        type: 'run.failed',
        payload: { error: end.error, durationMs, ...(end.nodeId ? { failedNodeId: end.nodeId } : {}) },
      };
    case 'cancelled':
      return {
        type: 'run.cancelled',
        payload: {
          reason: end.reason,
          cancelledBy: end.by,
          durationMs,
          ...(end.parentRunId ? { parentRunId: end.parentRunId } : {}),
        },
      };
  }
}
