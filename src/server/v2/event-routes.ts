import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ErrorCode, HostError, toHostError } from '../../core/index.js';
import type { Clock } from '../../core/index.js';
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
  runIdFromParam,
  toV2Error,
} from '../../openwop/v2/index.js';
import type { StreamMode, V2Owner, V2RunEvent } from '../../openwop/v2/index.js';
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
  const run = await host.store.getRun(runId);
  if (!run) throw new HostError(ErrorCode.NOT_FOUND, 'run not found');
  return runOwner(host, run);
}

function intQuery(raw: string | undefined, field: string, min: number, max: number): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new HostError(ErrorCode.VALIDATION_ERROR, `${field} must be an integer in ${min}..${max}`, { field });
  return n;
}

function frame(e: V2RunEvent, modes: readonly StreamMode[]): string {
  // One mode: `event:` is the v2 type; mixed: the mode that admitted it (events.md §The events channel).
  const name = modes.length === 1 ? e.type : modes.find((m) => admits(m, e.type))!;
  return `id: ${e.sequence}\nevent: ${name}\ndata: ${JSON.stringify(e)}\n\n`;
}

/**
 * `GET /runs/{runId}/events` (SSE, v2 events.md §The events channel): `streamMode` `updates` (default) and `debug`,
 * validated before anything else; `id:` the sequence, `event:` the v2 type, `data:` the v2 `RunEventDoc`; resumes
 * after `Last-Event-ID`; keep-alive comments; closes after the terminal event. `GET /runs/{runId}/events/poll`
 * (§Poll): `afterSequence` ≥ 0, `timeout` 1..60 s; answers `{runId, events, lastSequence, status, isTerminal}`.
 */
export function registerV2EventRoutes(app: FastifyInstance, deps: V2EventRouteDeps): void {
  const { host, clock } = deps;
  const keepAliveMs = Math.min(deps.sseKeepAliveMs ?? 15_000, 30_000);
  const maxPollMs = deps.maxPollMs ?? 60_000;

  app.get('/runs/:runId/events', { config: { operationId: 'streamRunEvents' } }, async (req: Req, reply) => {
    const modes = parseStreamMode(req.query.streamMode);
    const runId = runIdFromParam(req.params.runId);
    const owner = await requireRun(host, runId);
    const lastId = req.headers['last-event-id'];
    const after = typeof lastId === 'string' && /^\d+$/.test(lastId) ? Number(lastId) : -1;
    const project = (e: RunEvent): V2RunEvent | undefined => {
      const v2 = projectEvent(e, owner);
      return modes.some((m) => admits(m, v2.type)) || V2_TERMINAL_TYPES.has(v2.type) ? v2 : undefined;
    };
    let last = after;
    let closed = false;
    let live = false;
    const buffered: RunEvent[] = [];
    const unsubscribe = host.store.subscribe(runId, (e) => (live ? write(e) : buffered.push(e)));
    let initial: RunEvent[];
    try {
      initial = await host.store.events(runId, after);
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
    function close(): void {
      if (closed) return;
      closed = true;
      unsubscribe();
      clock.clearTimeout(timer);
      raw.end();
    }
    function write(e: RunEvent): void {
      if (closed || e.sequence <= last) return;
      last = e.sequence;
      let v2: V2RunEvent | undefined;
      try {
        v2 = project(e);
      } catch (err) {
        raw.write(`event: error\ndata: ${JSON.stringify(toV2Error(toHostError(err, ErrorCode.INTERNAL)).body)}\n\n`);
        close();
        return;
      }
      if (v2) raw.write(frame(v2, modes));
      if (V2_TERMINAL_TYPES.has(v2?.type ?? '')) close();
    }
    raw.on('close', close);
    raw.write(': connected\n\n');
    for (const e of initial) write(e);
    live = true;
    for (const e of buffered.sort((a, b) => a.sequence - b.sequence)) write(e);
    const run = await host.store.runHead(runId);
    if (run && TERMINAL_STATUSES.has(run.status) && last >= run.lastSequence) close();
  });

  app.get('/runs/:runId/events/poll', { config: { operationId: 'pollRunEvents' } }, async (req: Req) => {
    const runId = runIdFromParam(req.params.runId);
    const owner = await requireRun(host, runId);
    const after = intQuery(req.query.afterSequence, 'afterSequence', 0, Number.MAX_SAFE_INTEGER) ?? -1;
    const waitMs = Math.min((intQuery(req.query.timeout, 'timeout', 1, 60) ?? 30) * 1000, maxPollMs);
    const events = await longPollEvents(host, clock, { runId, after, waitMs, raw: req.raw });
    const run = (await host.store.runHead(runId))!;
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
