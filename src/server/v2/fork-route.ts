import type { FastifyInstance } from 'fastify';
import { ErrorCode, HostError } from '../../core/index.js';
import type { Clock } from '../../core/index.js';
import type { OpenwopHost } from '../../openwop/host.js';
import { bindRunId, runIdFromParam, runPathSegment, toForkRequest, v2TypeOf } from '../../openwop/v2/index.js';
import { callerOf } from '../auth.js';
import { pauseOrResume } from './pause-route.js';
import { v2IdempotencyKey } from './request-idempotency.js';
import type { RequestIdempotency } from './request-idempotency.js';

/**
 * `POST /runs/{runId}:fork` (v2 runs.md §Fork) over the engine's fork (replay.md, RFC 0140): `201 { runId,
 * sourceRunId, fromSeq, mode, status, eventsUrl }` with bound ids; the source may be a run created under either major.
 * `fromSeq` outside the source log is `422 fork_point_invalid`; a prefix row the codemap does not name is
 * `500 event_type_unmapped`, nothing forked. The same segment serves `:pause` and `:resume`
 * (pause-route.ts), whose `Idempotency-Key` is honoured through `idem`; any other `{runId}:{action}` is `404`.
 */
export function registerV2ForkRoute(
  app: FastifyInstance,
  host: OpenwopHost,
  clock: Clock,
  idem?: RequestIdempotency,
): void {
  // The router reads `:runId::fork` as one parameter, so the `{runId}:{action}` segment is matched here.
  app.post<{ Params: { runAction: string } }>(
    '/runs/:runAction',
    {
      config: { operationId: ['forkRun', 'pauseRun', 'resumeRun'] },
      // Pause and resume keep their Idempotency-Key in the request record; a fork in the engine's (fork.ts).
      ...idem?.hooks(
        (req) => /:(pause|resume)$/.exec((req.params as { runAction: string }).runAction)?.[1]?.concat('Run'),
        (req) => ({ params: req.params, body: req.body ?? null }),
      ),
    },
    async (req, reply) => {
      const action = /^(.+):(pause|resume)$/.exec(req.params.runAction);
      if (action) {
        callerOf(req);
        const body = await pauseOrResume(host, clock, action[2] as 'pause' | 'resume', action[1]!, req.body);
        return reply.status(202).send(body);
      }
      const m = /^(.+):fork$/.exec(req.params.runAction);
      if (!m) throw new HostError(ErrorCode.NOT_FOUND, `no route POST ${req.url.split('?')[0]}`);
      const who = callerOf(req);
      const sourceRunId = runIdFromParam(m[1]!);
      const source = await host.store.getRun(sourceRunId);
      if (!source) throw new HostError(ErrorCode.NOT_FOUND, 'run not found');
      const body = toForkRequest(req.body, source.lastSequence);
      // The reader rule binds the fork (v2 persistence.md §The reader rule): a prefix row the codemap does not name
      // fails it with `event_type_unmapped` before anything of the fork is written.
      for (const e of await host.store.events(sourceRunId, -1, body.fromSeq ?? 0)) v2TypeOf(e.type, e.sequence);
      const key = v2IdempotencyKey(req);
      const { fork, created } = await host.replay.fork(sourceRunId, body, who, key);
      const seg = runPathSegment(fork.runId);
      void reply.header('location', `/runs/${seg}`);
      if (!created) void reply.header('openwop-idempotent-replay', 'true');
      return reply.status(201).send({
        runId: bindRunId(fork.runId),
        sourceRunId: bindRunId(fork.sourceRunId),
        fromSeq: fork.fromSeq,
        mode: fork.mode,
        status: fork.status,
        eventsUrl: `/runs/${seg}/events`,
      });
    },
  );
}
