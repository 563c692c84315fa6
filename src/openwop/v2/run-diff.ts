import { jcs } from '../../core/index.js';
import type { V2RunEvent } from './event-projection.js';

/** One per-sequence difference (run-diff-response `eventDiffs[]`). */
export interface EventDiff {
  seq: number;
  op: 'added' | 'removed' | 'changed';
  aEvent?: V2RunEvent;
  bEvent?: V2RunEvent;
}

/** `GET /runs/{runId}:diff?against=` (v2 runs.md §Diff and ancestry, RFC 0054). */
export interface RunDiff {
  a: string;
  b: string;
  divergedAtSeq: number | null;
  eventDiffs: EventDiff[];
  stateDiff: Record<string, { a: unknown; b: unknown }>;
  truncated?: true;
}

/** One side of a diff: the run's bound id, its v2 events in sequence order, the compared state, and whether it ended. */
export interface DiffSide {
  runId: string;
  events: readonly V2RunEvent[];
  state: Record<string, unknown>;
  terminal: boolean;
}

// runs.md: eventId, runId, timestamp and other run-scoped fields are excluded from comparison (causationId names an
// event id of the same run).
function comparable(e: V2RunEvent): string {
  const { eventId: _e, runId: _r, timestamp: _t, causationId: _c, ...rest } = e;
  return jcs(rest);
}

/**
 * The diff of two runs: a pure function of their logs (runs.md §Diff and ancestry). Events align by `sequence`;
 * identical logs give `divergedAtSeq: null` and no `eventDiffs`. `stateDiff` names each compared state field that
 * differs; `truncated` is set when either run is still in flight.
 */
export function diffRuns(a: DiffSide, b: DiffSide): RunDiff {
  const bySeq = (events: readonly V2RunEvent[]) => new Map(events.map((e) => [e.sequence, e]));
  const as = bySeq(a.events);
  const bs = bySeq(b.events);
  const seqs = [...new Set([...as.keys(), ...bs.keys()])].sort((x, y) => x - y);
  const eventDiffs: EventDiff[] = [];
  for (const seq of seqs) {
    const ae = as.get(seq);
    const be = bs.get(seq);
    if (ae && be) {
      if (comparable(ae) !== comparable(be)) eventDiffs.push({ seq, op: 'changed', aEvent: ae, bEvent: be });
    } else if (ae) eventDiffs.push({ seq, op: 'removed', aEvent: ae });
    else if (be) eventDiffs.push({ seq, op: 'added', bEvent: be });
  }
  const stateDiff: RunDiff['stateDiff'] = {};
  for (const k of [...new Set([...Object.keys(a.state), ...Object.keys(b.state)])].sort()) {
    if (jcs(a.state[k] ?? null) !== jcs(b.state[k] ?? null))
      stateDiff[k] = { a: a.state[k] ?? null, b: b.state[k] ?? null };
  }
  return {
    a: a.runId,
    b: b.runId,
    divergedAtSeq: eventDiffs[0]?.seq ?? null,
    eventDiffs,
    stateDiff,
    ...(a.terminal && b.terminal ? {} : { truncated: true as const }),
  };
}
