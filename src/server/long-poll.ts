import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Clock } from '../core/index.js';
import type { OpenwopHost } from '../openwop/host.js';
import { TERMINAL_STATUSES } from '../openwop/types.js';
import type { RunEvent, RunStatus } from '../openwop/types.js';

/** How long at most an answer waits for the run's appends already in flight (see {@link longPollEvents}). */
export const POLL_COALESCE_MS = 20;
const TERMINAL_EVENTS = new Set(['run.completed', 'run.failed', 'run.cancelled']);

/**
 * The events of `runId` after `after`, waiting up to `waitMs` for the first one when there are none yet (the
 * long poll of both majors' `events/poll`). Answers at once when events are there, when the run has ended with
 * nothing after `after`, when `waitMs` is 0, or when the client goes away. It subscribes before reading, so an
 * event appended in between is not missed. `head` is the run's status and last sequence when the caller has just
 * read them (saves a read).
 *
 * Once it has events to answer with, it also takes those of the run's appends already submitted and not yet
 * committed (its next scheduling step, group-committed: `AppendBatcher`), for at most {@link POLL_COALESCE_MS} and
 * never past `waitMs`: a client then sees a burst of steps in one answer instead of one request per commit (issue 21;
 * the spec's poll returns "events since lastSequence" and leaves how many to the host). A run with nothing in flight
 * (a node working, a wait) is answered at once.
 */
export async function longPollEvents(
  host: OpenwopHost,
  clock: Clock,
  o: {
    runId: string;
    after: number;
    waitMs: number;
    raw: IncomingMessage;
    head?: { status: RunStatus; lastSequence: number };
  },
): Promise<RunEvent[]> {
  const { runId, after } = o;
  const started = performance.now();
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
    const run = o.head ?? (await host.store.runHead(runId));
    const ended = run !== undefined && TERMINAL_STATUSES.has(run.status) && run.lastSequence <= after;
    if (!events.length && o.waitMs > 0 && !fired && !ended) {
      await new Promise<void>((resolve) => {
        wake = resolve;
        t = clock.setTimeout(resolve, o.waitMs);
        o.raw.on('close', () => resolve());
      });
    }
    if (!events.length && fired) events = await host.store.events(runId, after);
    if (!events.length || o.waitMs <= 0) return events;
    const until = started + Math.min(o.waitMs, performance.now() - started + POLL_COALESCE_MS);
    while (!TERMINAL_EVENTS.has(events[events.length - 1]!.type) && performance.now() < until) {
      // One turn of the loop lets the actor submit the step the last commit unblocked.
      await nextTurn();
      const inFlight = host.store.appendsInFlight(runId);
      if (!inFlight) break;
      await inFlight;
      for (const e of await host.store.events(runId, events[events.length - 1]!.sequence)) events.push(e);
    }
    return events;
  } finally {
    unsubscribe();
    if (t) clock.clearTimeout(t);
  }
}
