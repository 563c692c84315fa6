import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode, HostError, toHostError } from '../core/index.js';
import type { Clock } from '../core/index.js';
import type { OpenwopHost } from '../openwop/host.js';
import { TERMINAL_STATUSES } from '../openwop/types.js';
import type { RunStatus } from '../openwop/types.js';
import { parseBufferMs, parseStreamMode } from '../openwop/stream-modes.js';
import { streamRunEvents } from './run-event-stream.js';
import { longPollEvents } from './long-poll.js';

/** Options of the event routes. */
export interface EventRouteDeps {
  host: OpenwopHost;
  clock: Clock;
  /** Interval of SSE keep-alive comments (default 15 s). */
  sseKeepAliveMs?: number;
  /** Ceiling of the long-poll `timeout` (default 30 s). */
  maxPollMs?: number;
}

function intParam(v: unknown, name: string, fallback: number): number {
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isInteger(n))
    throw new HostError(ErrorCode.VALIDATION_ERROR, `${name} must be an integer`, { path: `/${name}` });
  return n;
}

/**
 * The poll's cursor and wait. The spec's form (openapi `pollRunEvents`): `lastSequence` = the last sequence the
 * client holds (events after it come back; past the end is an empty 200) and `timeout` in seconds (1..60). The
 * older `afterSequence` form of this host keeps `timeout` in milliseconds.
 */
function pollWindow(q: Record<string, string>): { after: number; waitMs: number } {
  if (q.lastSequence !== undefined) {
    const after = intParam(q.lastSequence, 'lastSequence', -1);
    if (after < 0)
      throw new HostError(ErrorCode.VALIDATION_ERROR, 'lastSequence must be >= 0', { path: '/lastSequence' });
    const seconds = intParam(q.timeout, 'timeout', 30);
    if (seconds < 0 || seconds > 60)
      throw new HostError(ErrorCode.VALIDATION_ERROR, 'timeout must be 0..60 seconds', { path: '/timeout' });
    return { after, waitMs: seconds * 1000 };
  }
  const after = intParam(q.afterSequence, 'afterSequence', -1);
  const timeout = intParam(q.timeout, 'timeout', 25_000);
  if (timeout < 0) throw new HostError(ErrorCode.VALIDATION_ERROR, 'timeout must be >= 0', { path: '/timeout' });
  return { after, waitMs: timeout };
}

async function requireRun(host: OpenwopHost, runId: string): Promise<{ status: RunStatus; lastSequence: number }> {
  const head = await host.store.runHead(runId);
  if (!head) throw new HostError(ErrorCode.NOT_FOUND, `run ${runId} not found`, { runId });
  return head;
}

/**
 * `GET /v1/runs/{runId}/events`: the log as JSON `{events}`, or as SSE for `Accept: text/event-stream` in the
 * `streamMode` of stream-modes.md (`updates` by default; `values`, `messages`, `debug`, mixes; `bufferMs` batches),
 * `id` = sequence, resumes after `Last-Event-ID`, keep-alive comments, closes after the terminal event
 * (run-event-stream.ts). Both query parameters are validated for the JSON read too, which returns the whole log. `GET /v1/runs/{runId}/events/poll?lastSequence=&timeout=` (or `afterSequence=`): returns new events at
 * once, or waits up to `timeout` and returns `{events: [], isComplete, timedOut: true}`.
 */
export function registerEventRoutes(app: FastifyInstance, deps: EventRouteDeps): void {
  const { host, clock } = deps;
  const keepAliveMs = deps.sseKeepAliveMs ?? 15_000;
  const maxPollMs = deps.maxPollMs ?? 30_000;

  app.get(
    '/v1/runs/:runId/events',
    async (
      req: FastifyRequest<{ Params: { runId: string }; Querystring: Record<string, string> }>,
      reply: FastifyReply,
    ) => {
      const { runId } = req.params;
      // Validation before the content-shape branch (stream-modes.md §Content negotiation).
      const modes = parseStreamMode(req.query.streamMode);
      const bufferMs = parseBufferMs(req.query.bufferMs, modes);
      const run = await host.store.getRun(runId);
      if (!run) throw new HostError(ErrorCode.NOT_FOUND, `run ${runId} not found`, { runId });
      const lastId = req.headers['last-event-id'];
      const after = intParam(typeof lastId === 'string' ? lastId : req.query.afterSequence, 'afterSequence', -1);
      const accept = String(req.headers.accept ?? '');
      if (!accept.includes('text/event-stream')) {
        return { events: await host.store.events(runId, after) };
      }
      await streamRunEvents(reply, {
        host,
        clock,
        keepAliveMs,
        runId,
        modes,
        bufferMs,
        after,
        headers: {},
        project: (e) => e,
        run,
        snapshot: (state) => state.snapshot(),
        errorBody: (err) => toHostError(err, ErrorCode.INTERNAL).toEnvelope(),
      });
    },
  );

  app.get(
    '/v1/runs/:runId/events/poll',
    async (req: FastifyRequest<{ Params: { runId: string }; Querystring: Record<string, string> }>) => {
      const { runId } = req.params;
      const head = await requireRun(host, runId);
      const { after, waitMs } = pollWindow(req.query);
      const wait = Math.min(waitMs, maxPollMs);
      const events = await longPollEvents(host, clock, { runId, after, waitMs: wait, raw: req.raw, head });
      const lastSequence = events.length ? events[events.length - 1]!.sequence : after;
      const run = await host.store.runHead(runId);
      const isComplete = run !== undefined && TERMINAL_STATUSES.has(run.status);
      return { events, isComplete, lastSequence, timedOut: events.length === 0 };
    },
  );
}
