import { ErrorCode, HostError } from '../../core/index.js';
import type { StreamMode } from './event-projection.js';

const PATTERN = /^(values|(updates|messages|debug)(,(updates|messages|debug))*)$/;

/** Each individual mode this host serves (`details.supported` of `unsupported_stream_mode`). */
export const SUPPORTED_STREAM_MODES: readonly StreamMode[] = ['updates', 'values', 'messages', 'debug'];

/**
 * The modes a `streamMode` query names (default `updates`), deduplicated in request order. A value outside the v2
 * pattern (which also keeps `values` alone), or naming a mode not served here, raises `unsupported_stream_mode`
 * with `details.supported` (v2 events.md §The events channel).
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
