import type { FastifyReply } from 'fastify';
import type { Clock, TimerHandle } from '../core/index.js';
import type { OpenwopHost } from '../openwop/host.js';
import { admits } from '../openwop/stream-modes.js';
import type { StreamMode } from '../openwop/stream-modes.js';
import { TERMINAL_EVENT_TYPES, TERMINAL_STATUSES } from '../openwop/types.js';
import type { RunEvent } from '../openwop/types.js';
import { RunStateAt } from '../openwop/snapshot-at.js';
import type { StoredRun } from '../openwop/store.js';
import { batchFrame, eventFrame, snapshotFrame } from './sse-frames.js';
import type { EventDoc } from './sse-frames.js';

/** One SSE subscription to a run's log, as one major renders it. */
export interface RunStreamOptions {
  host: OpenwopHost;
  clock: Clock;
  keepAliveMs: number;
  runId: string;
  modes: readonly StreamMode[];
  /** 0: one frame per event; else events gathered into `batch` frames over windows of this many ms. */
  bufferMs: number;
  /** `Last-Event-ID`: frames start after this sequence (-1: from the start). */
  after: number;
  headers: Record<string, string>;
  /** The major's event document; throws for an event it cannot render (the stream then ends on an error frame). */
  project(e: RunEvent): EventDoc;
  /** `values`: the major's RunSnapshot of the run as `state` holds it (the log up to the event being sent). */
  snapshot(state: RunStateAt): unknown;
  /** `values`: the run whose log is folded (its definition, inputs and the fields written once). */
  run: StoredRun;
  /** The data of the `error` frame for a failure while streaming. */
  errorBody(err: unknown): unknown;
}

/** Whether an event ends a `bufferMs` window at once (terminal run events and suspensions). */
const FLUSHES = (type: string): boolean => TERMINAL_EVENT_TYPES.has(type) || type === 'node.suspended';

/**
 * Streams a run's log as SSE (v1 stream-modes.md, v2 events.md §The events channel, §SSE frames) in the requested
 * modes: events the modes admit (terminal events always), in log order, after `Last-Event-ID`; `values` sends a
 * `state.snapshot` after each `updates`-tier event instead, and a resumption starts with the snapshot at the
 * resumption point; `bufferMs` gathers events into `batch` frames, flushed on a terminal event, on `node.suspended`
 * and on close. Stored events are projected before the response starts, so an event the major cannot render is an
 * error response rather than a cut stream. Keep-alive comments; the stream closes after the terminal event.
 */
export async function streamRunEvents(reply: FastifyReply, o: RunStreamOptions): Promise<void> {
  const { host, clock, modes, bufferMs, after } = o;
  const values = modes[0] === 'values';
  const admitted = (type: string): boolean => TERMINAL_EVENT_TYPES.has(type) || modes.some((m) => admits(m, type));
  // `values` folds every event from the start of the log, so it reads the whole log; it sends only after `after`.
  const from = values ? -1 : after;
  let last = from;
  let closed = false;
  let live = false;
  const state = values ? new RunStateAt(o.run) : undefined;
  const buffered: RunEvent[] = [];
  const unsubscribe = host.store.subscribe(o.runId, (e) => (live ? write(e) : buffered.push(e)));
  let initial: RunEvent[];
  try {
    initial = await host.store.events(o.runId, from);
    initial.forEach((e) => o.project(e));
  } catch (err) {
    unsubscribe();
    throw err;
  }
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    ...o.headers,
  });
  let timer = clock.setTimeout(function tick() {
    if (closed) return;
    raw.write(': keep-alive\n\n');
    timer = clock.setTimeout(tick, o.keepAliveMs);
  }, o.keepAliveMs);
  let batch: EventDoc[] = [];
  let batchTimer: TimerHandle | undefined;
  function flush(): void {
    if (batchTimer !== undefined) clock.clearTimeout(batchTimer);
    batchTimer = undefined;
    if (batch.length && !raw.destroyed) raw.write(batchFrame(batch));
    batch = [];
  }
  function close(): void {
    if (closed) return;
    closed = true;
    unsubscribe();
    clock.clearTimeout(timer);
    flush();
    raw.end();
  }
  function send(doc: EventDoc): void {
    if (state) raw.write(snapshotFrame(doc.sequence, o.snapshot(state)));
    else if (bufferMs === 0) raw.write(eventFrame(doc, modes));
    else {
      batch.push(doc);
      if (FLUSHES(doc.type)) flush();
      else batchTimer ??= clock.setTimeout(flush, bufferMs);
    }
  }
  function write(e: RunEvent): void {
    if (closed || e.sequence <= last) return;
    last = e.sequence;
    state?.apply(e);
    let doc: EventDoc;
    try {
      doc = o.project(e);
    } catch (err) {
      flush();
      raw.write(`event: error\ndata: ${JSON.stringify(o.errorBody(err))}\n\n`);
      close();
      return;
    }
    if (state && e.sequence === after) raw.write(snapshotFrame(after, o.snapshot(state)));
    if (e.sequence <= after) return;
    if (admitted(doc.type)) send(doc);
    if (TERMINAL_EVENT_TYPES.has(doc.type)) close();
  }
  raw.on('close', close);
  raw.write(': connected\n\n');
  for (const e of initial) write(e);
  live = true;
  for (const e of buffered.sort((a, b) => a.sequence - b.sequence)) write(e);
  // A terminal run whose terminal event was at or before Last-Event-ID: nothing more will come.
  const now = await host.store.runHead(o.runId);
  if (now && TERMINAL_STATUSES.has(now.status) && last >= now.lastSequence) close();
}
