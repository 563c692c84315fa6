import type { RunEvent } from '../types.js';
import { v2TypeOf } from './codemap.js';
import { bindRunId, v2EventId } from './ids.js';
import type { V2Owner } from './owner.js';

/** `schemas/v2/run-event.schema.json` (`RunEventDoc`), closed. */
export interface V2RunEvent {
  eventId: string;
  runId: string;
  type: string;
  payload: unknown;
  timestamp: string;
  sequence: number;
  schemaVersion: number;
  nodeId?: string;
  engineVersion?: number;
  causationId?: string;
}

/** v2 types a run stream ends on (v2 events.md §SSE frames). */
export const V2_TERMINAL_TYPES: ReadonlySet<string> = new Set(['run.completed', 'run.failed', 'run.cancelled']);

/**
 * Projects one engine event (an era-2 log, v1 names) to the v2 envelope: the type through the codemap, v2 ids,
 * `schemaVersion` (1 when the engine wrote none), integer `engineVersion`. `sequence`, `timestamp` and the payload
 * pass through (events.md §Era-2 logs); `run.started` also carries the run's `owner` (runs.md §The start event).
 * Raises `event_type_unmapped` for a type the codemap does not name.
 */
export function projectEvent(e: RunEvent, owner: V2Owner): V2RunEvent {
  const type = v2TypeOf(e.type, e.sequence);
  const out: V2RunEvent = {
    eventId: v2EventId(e.eventId),
    runId: bindRunId(e.runId),
    type,
    payload: type === 'run.started' ? { ...e.payload, owner } : e.payload,
    timestamp: e.timestamp,
    sequence: e.sequence,
    schemaVersion: e.schemaVersion ?? 1,
  };
  if (e.nodeId !== undefined) out.nodeId = e.nodeId;
  if (e.engineVersion !== undefined && /^\d+$/.test(String(e.engineVersion)))
    out.engineVersion = Number(e.engineVersion);
  if (e.causationId !== undefined) out.causationId = v2EventId(e.causationId);
  return out;
}

/** The `streamMode` filters of v2 events.md §The events channel (`values` never combines with another). */
export type StreamMode = 'updates' | 'values' | 'messages' | 'debug';

const UPDATE_TYPES = new Set([
  'node.completed',
  'node.failed',
  'node.skipped',
  'node.cancelled',
  'node.suspended',
  'node.dispatched',
  'artifact.created',
  'workspace.updated',
]);
const UPDATE_DOMAINS = new Set(['run', 'interrupt', 'approval', 'clarification', 'eval', 'deployment']);
/** The persisted type of a streamed AI output chunk, framed `ai.message.chunk` in `messages` (§SSE frames). */
export const OUTPUT_CHUNK_TYPE = 'output.chunk';

/**
 * Whether a v2 event belongs to a mode (events.md, the mode table): `debug` admits every event; `updates` run
 * transitions, terminal node transitions, suspensions, `node.dispatched`, interrupt events, `artifact.created`,
 * `eval.*`, `deployment.*` and `workspace.updated`; `values` is triggered by the same `updates`-tier transitions (it
 * emits a synthesized snapshot after each); `messages` admits the AI output chunks (`output.chunk`) only.
 */
export function admits(mode: StreamMode, type: string): boolean {
  if (mode === 'debug') return true;
  if (mode === 'messages') return type === OUTPUT_CHUNK_TYPE;
  return UPDATE_TYPES.has(type) || UPDATE_DOMAINS.has(type.slice(0, type.indexOf('.')));
}
