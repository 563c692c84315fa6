import { OUTPUT_CHUNK_TYPE, admits } from '../openwop/stream-modes.js';
import type { StreamMode } from '../openwop/stream-modes.js';

// The frames of a run's event stream (v1 stream-modes.md, v2 events.md §SSE frames): `id:` the sequence, `event:` a
// type or one of the three frame names that are not types (`state.snapshot`, `batch`, `ai.message.chunk`), `data:`
// one JSON document.

/** A run event as one major renders it (v1 `RunEventDoc`, v2 `RunEventDoc`). */
export interface EventDoc {
  type: string;
  sequence: number;
  payload: unknown;
}

function sse(id: number, event: string, data: unknown): string {
  return `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * One run event. In a single mode `event:` is its type, except that `messages` frames an AI output chunk as
 * `ai.message.chunk` with the `outputChunk` payload as `data:`; in a mixed mode `event:` names the mode that admitted
 * it (the first listed) and `data:` is the event (v1 stream-modes.md §Mixed mode, v2 events.md §The events channel).
 */
export function eventFrame(e: EventDoc, modes: readonly StreamMode[]): string {
  if (modes.length > 1) return sse(e.sequence, modes.find((m) => admits(m, e.type)) ?? e.type, e);
  if (modes[0] === 'messages' && e.type === OUTPUT_CHUNK_TYPE) return sse(e.sequence, 'ai.message.chunk', e.payload);
  return sse(e.sequence, e.type, e);
}

/** `values`: the run as it stood after the event at `sequence` (the major's `RunSnapshot`). */
export function snapshotFrame(sequence: number, snapshot: unknown): string {
  return sse(sequence, 'state.snapshot', snapshot);
}

/** `bufferMs`: the events gathered in one window, `id:` the highest sequence so `Last-Event-ID` resumes after it. */
export function batchFrame(events: readonly EventDoc[]): string {
  return sse(events[events.length - 1]!.sequence, 'batch', events);
}
