// The event log of one run, live: the stored events, then each new one as the host appends it (SSE), resumed
// after a drop with Last-Event-ID until the run's terminal event (`debug` mode: the whole log, not only `updates`).
import { useEffect, useState } from 'preact/hooks';
import { getToken } from './api.js';
import type { RunEvent } from './run-types.js';
import { readStream } from './sse.js';

const TERMINAL_EVENTS = new Set(['run.completed', 'run.failed', 'run.cancelled']);

export function useRunTimeline(runId: string | null): RunEvent[] {
  const [events, setEvents] = useState<RunEvent[]>([]);
  useEffect(() => {
    setEvents([]);
    if (!runId) return;
    const ac = new AbortController();
    let last = -1;
    let ended = false;
    void (async () => {
      while (!ac.signal.aborted && !ended) {
        const headers: Record<string, string> = last >= 0 ? { 'last-event-id': String(last) } : {};
        await readStream(
          `/v1/runs/${encodeURIComponent(runId)}/events?streamMode=debug`,
          getToken(),
          headers,
          ac.signal,
          (e) => {
            const ev = e.data as RunEvent | null;
            if (!ev || typeof ev.sequence !== 'number' || ev.sequence <= last) return;
            last = ev.sequence;
            if (TERMINAL_EVENTS.has(ev.type)) ended = true;
            setEvents((list) => [...list, ev]);
          },
        ).catch(() => undefined);
        if (!ended && !ac.signal.aborted) await new Promise((r) => setTimeout(r, 1000));
      }
    })();
    return () => ac.abort();
  }, [runId]);
  return events;
}
