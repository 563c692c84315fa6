import type { RunError, RunEvent } from './types.js';

/**
 * What a source run recorded for one execution of one node: the n-th `node.started` of `nodeId` (n = the execution
 * ordinal, 1-based, openwop#1718: never `(nodeId, attempt)` or "the latest") and the events up to the node's next start.
 */
export interface RecordedExecution {
  /** The `node.started` of this execution. */
  startedEventId: string;
  startedSequence: number;
  /** `ctx.checkpoint` values recorded during it (name → value): the nondeterminism the node drew. */
  checkpoints: Map<string, unknown>;
  /** How it ended, when it did (`undefined`: still running, or the run stopped before it ended). */
  outcome?:
    | {
        kind: 'completed';
        eventId: string;
        sequence: number;
        outputs: Record<string, unknown>;
        variables: Record<string, unknown>;
        /** Extra `node.completed` payload fields (ledger `seq`/`digest`, ...), without the engine-owned ones. */
        info: Record<string, unknown>;
        exitLoop: boolean;
        /** The recorded `durationMs`: a replay reports it rather than a re-measured one (forks stay identical). */
        durationMs?: number;
      }
    | { kind: 'failed'; eventId: string; sequence: number; error: RunError; info: Record<string, unknown> }
    | { kind: 'cancelled'; eventId: string; sequence: number };
}

const ENGINE_COMPLETED_FIELDS = new Set(['nodeId', 'outputs', 'durationMs', 'exitLoop', 'replayedFrom']);
const ENGINE_FAILED_FIELDS = new Set(['nodeId', 'error', 'attempts', 'replayedFrom']);

function without(payload: Record<string, unknown>, drop: ReadonlySet<string>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(payload).filter(([k]) => !drop.has(k)));
}

function nodeOf(e: RunEvent): string | undefined {
  return e.nodeId ?? (typeof e.payload.nodeId === 'string' ? e.payload.nodeId : undefined);
}

/**
 * The `execution`-th execution (1-based) of `nodeId` in `events`, or undefined when the log has fewer. Keyed on the
 * ordinal, so in a loop the second execution never resolves from the first (replay.md §Suppression rule 2).
 */
export function recordedExecution(
  events: readonly RunEvent[],
  nodeId: string,
  execution: number,
): RecordedExecution | undefined {
  let seen = 0;
  let rec: RecordedExecution | undefined;
  const variables: Record<string, unknown> = {};
  for (const e of events) {
    if (nodeOf(e) !== nodeId) continue;
    if (e.type === 'node.started') {
      if (rec) break;
      if (++seen === execution)
        rec = { startedEventId: e.eventId, startedSequence: e.sequence, checkpoints: new Map() };
      continue;
    }
    if (!rec) continue;
    if (e.type === 'variable.changed') {
      variables[e.payload.name as string] = e.payload.next;
    } else if (e.type === 'log.appended') {
      const f = e.payload.fields as { checkpoint?: unknown; value?: unknown } | undefined;
      if (typeof f?.checkpoint === 'string' && !rec.checkpoints.has(f.checkpoint))
        rec.checkpoints.set(f.checkpoint, f.value);
    } else if (e.type === 'node.completed') {
      rec.outcome = {
        kind: 'completed',
        eventId: e.eventId,
        sequence: e.sequence,
        outputs: (e.payload.outputs ?? {}) as Record<string, unknown>,
        variables,
        info: without(e.payload, ENGINE_COMPLETED_FIELDS),
        exitLoop: e.payload.exitLoop === true,
        ...(typeof e.payload.durationMs === 'number' ? { durationMs: e.payload.durationMs } : {}),
      };
      break;
    } else if (e.type === 'node.failed') {
      rec.outcome = {
        kind: 'failed',
        eventId: e.eventId,
        sequence: e.sequence,
        error: e.payload.error as RunError,
        info: without(e.payload, ENGINE_FAILED_FIELDS),
      };
      break;
    } else if (e.type === 'node.cancelled') {
      rec.outcome = { kind: 'cancelled', eventId: e.eventId, sequence: e.sequence };
      break;
    }
  }
  return rec;
}
