import type { IncomingMessage } from 'node:http';
import type { Clock } from '../core/index.js';
import type { OpenwopHost } from '../openwop/host.js';
import { TERMINAL_STATUSES } from '../openwop/types.js';
import type { RunEvent } from '../openwop/types.js';

/**
 * The events of `runId` after `after`, waiting up to `waitMs` for the first one when there are none yet (the
 * long poll of both majors' `events/poll`). Answers at once when events are there, when the run has ended with
 * nothing after `after`, when `waitMs` is 0, or when the client goes away. It subscribes before reading, so an
 * event appended in between is not missed.
 */
export async function longPollEvents(
  host: OpenwopHost,
  clock: Clock,
  o: { runId: string; after: number; waitMs: number; raw: IncomingMessage },
): Promise<RunEvent[]> {
  const { runId, after } = o;
  let fired = false;
  let wake: (() => void) | undefined;
  const unsubscribe = host.store.subscribe(runId, (e) => {
    if (e.sequence <= after) return;
    fired = true;
    wake?.();
  });
  let t: ReturnType<Clock['setTimeout']> | undefined;
  try {
    let events = await host.store.events(runId, after);
    const run = await host.store.runHead(runId);
    const ended = run !== undefined && TERMINAL_STATUSES.has(run.status) && run.lastSequence <= after;
    if (!events.length && o.waitMs > 0 && !fired && !ended) {
      await new Promise<void>((resolve) => {
        wake = resolve;
        t = clock.setTimeout(resolve, o.waitMs);
        o.raw.on('close', () => resolve());
      });
    }
    if (!events.length && fired) events = await host.store.events(runId, after);
    return events;
  } finally {
    unsubscribe();
    if (t) clock.clearTimeout(t);
  }
}
