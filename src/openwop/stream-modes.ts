import { ErrorCode, HostError } from '../core/index.js';

// The SSE stream modes of both majors (v1 stream-modes.md, v2 events.md §The events channel): the same four modes,
// the same mixing rule (`values` alone) and the same `bufferMs` batches.

/** A `streamMode` filter (`values` never combines with another). */
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

const PATTERN = /^(values|(updates|messages|debug)(,(updates|messages|debug))*)$/;

/** Each individual mode this host serves (`details.supported` of `unsupported_stream_mode`). */
export const SUPPORTED_STREAM_MODES: readonly StreamMode[] = ['updates', 'values', 'messages', 'debug'];

/**
 * The modes a `streamMode` query names (default `updates`), deduplicated in request order. A value outside the
 * pattern (which also keeps `values` alone), or naming a mode not served here, raises `unsupported_stream_mode`
 * with `details.supported` (v1 stream-modes.md §Mode selection, v2 events.md §The events channel).
 */
export function parseStreamMode(raw: unknown): StreamMode[] {
  if (raw === undefined || raw === '') return ['updates'];
  const refuse = (): never => {
    throw new HostError(ErrorCode.UNSUPPORTED_STREAM_MODE, 'streamMode names a mode this host does not serve', {
      supported: [...SUPPORTED_STREAM_MODES],
    });
  };
  if (typeof raw !== 'string' || !PATTERN.test(raw)) return refuse();
  const modes: StreamMode[] = [];
  for (const m of raw.split(',')) {
    if (!(SUPPORTED_STREAM_MODES as readonly string[]).includes(m)) return refuse();
    if (!modes.includes(m as StreamMode)) modes.push(m as StreamMode);
  }
  return modes;
}

/**
 * `bufferMs`: 0 or absent is no batching (v1 stream-modes.md §Aggregation hint); a window of up to 5000 ms otherwise.
 * Anything else is `validation_error`, as is a window beside `values` (its frames are snapshots, not events).
 */
export function parseBufferMs(raw: unknown, modes: readonly StreamMode[]): number {
  if (raw === undefined || raw === '') return 0;
  const n = Number(raw);
  if (typeof raw !== 'string' || !Number.isInteger(n) || n < 0 || n > 5000)
    throw new HostError(ErrorCode.VALIDATION_ERROR, 'bufferMs must be an integer in 0..5000', { field: 'bufferMs' });
  if (n > 0 && modes[0] === 'values')
    throw new HostError(
      ErrorCode.VALIDATION_ERROR,
      'bufferMs batches run events; the values mode streams snapshots, so leave bufferMs out with streamMode=values',
      { field: 'bufferMs' },
    );
  return n;
}
