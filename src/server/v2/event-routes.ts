import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ErrorCode, HostError, toHostError } from '../../core/index.js';
import type { Clock } from '../../core/index.js';
import type { OpenwopHost } from '../../openwop/host.js';
import { TERMINAL_STATUSES } from '../../openwop/types.js';
import { longPollEvents } from '../long-poll.js';
import { bindRunId, projectEvent, projectSnapshot, runIdFromParam, toV2Error } from '../../openwop/v2/index.js';
import type { StoredRun } from '../../openwop/store.js';
import { parseBufferMs, parseStreamMode } from '../../openwop/stream-modes.js';
import { streamRunEvents } from '../run-event-stream.js';
import type { V2Owner } from '../../openwop/v2/index.js';
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

/**
 * `GET /runs/{runId}/events` (SSE, v2 events.md §The events channel, §SSE frames): every `streamMode` (`updates` by
 * default, `values`, `messages`, `debug` and their mixes) and `bufferMs` (0..5000), both validated before anything
 * else; `id:` the sequence, `event:` the v2 type, `data:` the v2 `RunEventDoc`; `values` frames carry the v2
 * `RunSnapshot` as the log stood at that event (run-event-stream.ts). `GET /runs/{runId}/events/poll` (§Poll):
 * `afterSequence` ≥ 0, `timeout` 1..60 s; answers `{runId, events, lastSequence, status, isTerminal}`.
 */
export function registerV2EventRoutes(app: FastifyInstance, deps: V2EventRouteDeps): void {
  const { host, clock } = deps;
  const keepAliveMs = Math.min(deps.sseKeepAliveMs ?? 15_000, 30_000);
  const maxPollMs = deps.maxPollMs ?? 60_000;

  app.get('/runs/:runId/events', { config: { operationId: 'streamRunEvents' } }, async (req: Req, reply) => {
    const modes = parseStreamMode(req.query.streamMode);
    const bufferMs = parseBufferMs(req.query.bufferMs, modes);
    const runId = runIdFromParam(req.params.runId);
    const run = await storedRun(host, runId);
    const owner = await runOwner(host, run);
    const lastId = req.headers['last-event-id'];
    await streamRunEvents(reply, {
      host,
      clock,
      keepAliveMs,
      runId,
      modes,
      bufferMs,
      after: typeof lastId === 'string' && /^\d+$/.test(lastId) ? Number(lastId) : -1,
      headers: { 'openwop-version': '2.0' },
      project: (e) => projectEvent(e, owner),
      run,
      snapshot: (state) => projectSnapshot(state.snapshot(), owner, run.inputs, run.eventLogSchemaVersion),
      errorBody: (err) => toV2Error(toHostError(err, ErrorCode.INTERNAL)).body,
    });
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
