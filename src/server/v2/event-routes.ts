import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ErrorCode, HostError, toHostError } from '../../core/index.js';
import type { Clock, TimerHandle } from '../../core/index.js';
import type { OpenwopHost } from '../../openwop/host.js';
import { TERMINAL_STATUSES } from '../../openwop/types.js';
import { longPollEvents } from '../long-poll.js';
import type { RunEvent } from '../../openwop/types.js';
import {
  V2_TERMINAL_TYPES,
  admits,
  bindRunId,
  parseStreamMode,
  projectEvent,
  projectSnapshot,
  runIdFromParam,
  toV2Error,
} from '../../openwop/v2/index.js';
import { snapshotAt } from '../../openwop/snapshot-at.js';
import type { StoredRun } from '../../openwop/store.js';
import { batchFrame, eventFrame, snapshotFrame } from './sse-frames.js';
import type { V2Owner, V2RunEvent } from '../../openwop/v2/index.js';
import { runOwner } from './run-owner.js';

/** Options of the major-2 event routes. */
export interface V2EventRouteDeps {
  host: OpenwopHost;
  clock: Clock;
  /** Interval of SSE keep-alive comments (default 15 s; v2 requires at most 30 s). */
  sseKeepAliveMs?: number;
  /** Ceiling of the long-poll wait in ms (default 60 s, the v2 maximum `timeout`). */
  maxPollMs?: number;
}

type Req = FastifyRequest<{ Params: { runId: string }; Querystring: Record<string, string | undefined> }>;

async function requireRun(host: OpenwopHost, runId: string): Promise<V2Owner> {
  return runOwner(host, await storedRun(host, runId));
}

async function storedRun(host: OpenwopHost, runId: string): Promise<StoredRun> {
  const run = await host.store.getRun(runId);
  if (!run) throw new HostError(ErrorCode.NOT_FOUND, 'run not found');
  return run;
}

function intQuery(raw: string | undefined, field: string, min: number, max: number): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new HostError(ErrorCode.VALIDATION_ERROR, `${field} must be an integer in ${min}..${max}`, { field });
  return n;
}

/** Whether an event ends a `bufferMs` window at once (events.md §SSE frames: terminal events and suspensions). */
const FLUSHES = (type: string): boolean => V2_TERMINAL_TYPES.has(type) || type === 'node.suspended';

/**
 * `GET /runs/{runId}/events` (SSE, v2 events.md §The events channel, §SSE frames): every `streamMode` (`updates` by
 * default, `values`, `messages`, `debug` and their mixes), validated before anything else; `id:` the sequence,
 * `event:` the v2 type, `data:` the v2 `RunEventDoc`. `values` streams one `state.snapshot` (the run as the log
 * stood then) after each `updates`-tier transition, and a resumption starts with the snapshot at the resumption
 * point. `bufferMs` (0..5000) gathers events into `batch` frames, flushed on a terminal event, on `node.suspended`
 * and on close. Resumes after `Last-Event-ID`; keep-alive comments; closes after the terminal event.
 * `GET /runs/{runId}/events/poll` (§Poll): `afterSequence` ≥ 0, `timeout` 1..60 s; answers
 * `{runId, events, lastSequence, status, isTerminal}`.
 */
export function registerV2EventRoutes(app: FastifyInstance, deps: V2EventRouteDeps): void {
  const { host, clock } = deps;
  const keepAliveMs = Math.min(deps.sseKeepAliveMs ?? 15_000, 30_000);
  const maxPollMs = deps.maxPollMs ?? 60_000;

  app.get('/runs/:runId/events', { config: { operationId: 'streamRunEvents' } }, async (req: Req, reply) => {
    const modes = parseStreamMode(req.query.streamMode);
    const values = modes[0] === 'values';
    const bufferMs = intQuery(req.query.bufferMs, 'bufferMs', 0, 5000);
    if (values && bufferMs !== undefined)
      throw new HostError(
        ErrorCode.VALIDATION_ERROR,
        'bufferMs batches run events; the values mode streams snapshots, so leave bufferMs out with streamMode=values',
        { field: 'bufferMs' },
      );
    const runId = runIdFromParam(req.params.runId);
    const run = await storedRun(host, runId);
    const owner = await runOwner(host, run);
    const lastId = req.headers['last-event-id'];
    const after = typeof lastId === 'string' && /^\d+$/.test(lastId) ? Number(lastId) : -1;
    const project = (e: RunEvent): V2RunEvent | undefined => {
      const v2 = projectEvent(e, owner);
      return modes.some((m) => admits(m, v2.type)) || V2_TERMINAL_TYPES.has(v2.type) ? v2 : undefined;
    };
    // `values` folds every event from the start of the log, so it reads the whole log; it emits only after `after`.
    const from = values ? -1 : after;
    let last = from;
    let closed = false;
    let live = false;
    const folded: RunEvent[] = [];
    const buffered: RunEvent[] = [];
    const unsubscribe = host.store.subscribe(runId, (e) => (live ? write(e) : buffered.push(e)));
    let initial: RunEvent[];
    try {
      initial = await host.store.events(runId, from);
      // Project the stored log before the stream opens, so an unmappable type is an error response, not a cut stream.
      initial.forEach(project);
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
      'openwop-version': '2.0',
    });
    let timer = clock.setTimeout(function tick() {
      if (closed) return;
      raw.write(': keep-alive\n\n');
      timer = clock.setTimeout(tick, keepAliveMs);
    }, keepAliveMs);
    let batch: V2RunEvent[] = [];
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
    const snapshot = (): unknown => projectSnapshot(snapshotAt(run, folded), owner, run.inputs);
    function emit(v2: V2RunEvent): void {
      if (values) raw.write(snapshotFrame(v2.sequence, snapshot()));
      else if (bufferMs === undefined) raw.write(eventFrame(v2, modes));
      else {
        batch.push(v2);
        if (FLUSHES(v2.type)) flush();
        else batchTimer ??= clock.setTimeout(flush, bufferMs);
      }
    }
    function write(e: RunEvent): void {
      if (closed || e.sequence <= last) return;
      last = e.sequence;
      if (values) folded.push(e);
      let v2: V2RunEvent | undefined;
      try {
        v2 = project(e);
      } catch (err) {
        flush();
        raw.write(`event: error\ndata: ${JSON.stringify(toV2Error(toHostError(err, ErrorCode.INTERNAL)).body)}\n\n`);
        close();
        return;
      }
      if (e.sequence === after && values) raw.write(snapshotFrame(after, snapshot()));
      if (e.sequence <= after) return;
      if (v2) emit(v2);
      if (V2_TERMINAL_TYPES.has(v2?.type ?? '')) close();
    }
    raw.on('close', close);
    raw.write(': connected\n\n');
    for (const e of initial) write(e);
    live = true;
    for (const e of buffered.sort((a, b) => a.sequence - b.sequence)) write(e);
    const now = await host.store.getRun(runId);
    if (now && TERMINAL_STATUSES.has(now.status) && last >= now.lastSequence) close();
  });

  app.get('/runs/:runId/events/poll', { config: { operationId: 'pollRunEvents' } }, async (req: Req) => {
    const runId = runIdFromParam(req.params.runId);
    const owner = await requireRun(host, runId);
    const after = intQuery(req.query.afterSequence, 'afterSequence', 0, Number.MAX_SAFE_INTEGER) ?? -1;
    const waitMs = Math.min((intQuery(req.query.timeout, 'timeout', 1, 60) ?? 30) * 1000, maxPollMs);
    const events = await longPollEvents(host, clock, { runId, after, waitMs, raw: req.raw });
    const run = (await host.store.getRun(runId))!;
    const projected = events.map((e) => projectEvent(e, owner));
    // lastSequence: the highest sequence in the log when answering, -1 for an empty log (events.md §Poll).
    return {
      runId: bindRunId(runId),
      events: projected,
      lastSequence: run.lastSequence,
      status: run.status,
      isTerminal: TERMINAL_STATUSES.has(run.status),
    };
  });
}
