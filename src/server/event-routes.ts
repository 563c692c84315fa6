import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode, HostError } from '../core/index.js';
import type { Clock } from '../core/index.js';
import type { OpenwopHost } from '../openwop/host.js';
import { TERMINAL_EVENT_TYPES } from '../openwop/types.js';
import type { RunEvent } from '../openwop/types.js';

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

async function requireRun(host: OpenwopHost, runId: string): Promise<void> {
  if (!(await host.store.getRun(runId))) throw new HostError(ErrorCode.NOT_FOUND, `run ${runId} not found`, { runId });
}

function sseFrame(e: RunEvent): string {
  return `id: ${e.sequence}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;
}

/**
 * `GET /v1/runs/{runId}/events`: the log as JSON `{events}`, or as SSE for `Accept: text/event-stream`
 * (`id` = sequence, resumes after `Last-Event-ID`, keep-alive comments, closes after the terminal
 * event). `GET /v1/runs/{runId}/events/poll?afterSequence=&timeout=`: returns new events at once, or
 * waits up to `timeout` ms and returns `{events: [], timedOut: true}`.
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
      await requireRun(host, runId);
      const lastId = req.headers['last-event-id'];
      const after = intParam(typeof lastId === 'string' ? lastId : req.query.afterSequence, 'afterSequence', -1);
      const accept = String(req.headers.accept ?? '');
      if (!accept.includes('text/event-stream')) {
        return { events: await host.store.events(runId, after) };
      }
      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
      });
      let last = after;
      let closed = false;
      const buffered: RunEvent[] = [];
      let live = false;
      const write = (e: RunEvent): void => {
        if (closed || e.sequence <= last) return;
        last = e.sequence;
        raw.write(sseFrame(e));
        if (TERMINAL_EVENT_TYPES.has(e.type)) close();
      };
      const unsubscribe = host.store.subscribe(runId, (e) => (live ? write(e) : buffered.push(e)));
      let timer = clock.setTimeout(function tick() {
        if (closed) return;
        raw.write(': keep-alive\n\n');
        timer = clock.setTimeout(tick, keepAliveMs);
      }, keepAliveMs);
      const close = (): void => {
        if (closed) return;
        closed = true;
        unsubscribe();
        clock.clearTimeout(timer);
        raw.end();
      };
      raw.on('close', close);
      raw.write(': connected\n\n');
      for (const e of await host.store.events(runId, after)) write(e);
      live = true;
      for (const e of buffered.sort((a, b) => a.sequence - b.sequence)) write(e);
      // A stored terminal run whose terminal event was already sent before Last-Event-ID: nothing more will come.
      const run = await host.store.getRun(runId);
      if (run && ['completed', 'failed', 'cancelled'].includes(run.status) && last >= run.lastSequence) close();
    },
  );

  app.get(
    '/v1/runs/:runId/events/poll',
    async (req: FastifyRequest<{ Params: { runId: string }; Querystring: Record<string, string> }>) => {
      const { runId } = req.params;
      await requireRun(host, runId);
      const after = intParam(req.query.afterSequence, 'afterSequence', -1);
      const timeout = intParam(req.query.timeout, 'timeout', 25_000);
      if (timeout < 0) throw new HostError(ErrorCode.VALIDATION_ERROR, 'timeout must be >= 0', { path: '/timeout' });
      const wait = Math.min(timeout, maxPollMs);
      // Subscribe before reading, so an event appended in between is not missed.
      let fired = false;
      let wake: (() => void) | undefined;
      const unsubscribe = host.store.subscribe(runId, (e) => {
        if (e.sequence <= after) return;
        fired = true;
        wake?.();
      });
      let t: ReturnType<Clock['setTimeout']> | undefined;
      let events: RunEvent[];
      try {
        events = await host.store.events(runId, after);
        if (!events.length && wait > 0 && !fired) {
          await new Promise<void>((resolve) => {
            wake = resolve;
            t = clock.setTimeout(resolve, wait);
            req.raw.on('close', () => resolve());
          });
        }
        if (!events.length && fired) events = await host.store.events(runId, after);
      } finally {
        unsubscribe();
        if (t) clock.clearTimeout(t);
      }
      const lastSequence = events.length ? events[events.length - 1]!.sequence : after;
      return { events, lastSequence, timedOut: events.length === 0 };
    },
  );
}
