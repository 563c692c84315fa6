import type { RunEvent } from '../types.js';
import { v2TypeOf } from './codemap.js';
import { bindRunId, v2EventId } from './ids.js';
import { projectPayload } from './payload-projection.js';
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
 * `schemaVersion` (1 when the engine wrote none), integer `engineVersion`. `sequence` and `timestamp` pass through
 * (events.md §Era-2 logs); the payload is projected onto its closed v2 definition (payload-projection.ts: host fields
 * with no v2 seat are left out); `run.started` also carries the run's `owner` (runs.md §The start event).
 * Raises `event_type_unmapped` for a type the codemap does not name.
 */
export function projectEvent(e: RunEvent, owner: V2Owner): V2RunEvent {
  const type = v2TypeOf(e.type, e.sequence);
  const out: V2RunEvent = {
    eventId: v2EventId(e.eventId),
    runId: bindRunId(e.runId),
    type,
    payload: projectPayload(type, type === 'run.started' ? { ...e.payload, owner } : e.payload).payload,
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
