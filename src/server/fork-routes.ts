import type { FastifyInstance } from 'fastify';
import { ErrorCode, HostError } from '../core/index.js';
import type { ForkRequest } from '../openwop/fork.js';
import type { OpenwopHost } from '../openwop/host.js';
import { callerOf } from './auth.js';
import { checkBody } from './request-schemas.js';

/**
 * The fork route (replay.md §Endpoint, RFC 0140): `POST /v1/runs/{runId}:fork` → 201 `{runId, sourceRunId, fromSeq,
 * mode, status, eventsUrl}` (200 when an `Idempotency-Key` replays an earlier fork). The effect-count seam that
 * witnesses suppression is in test-seam-routes.ts (off unless enabled).
 */
export function registerForkRoutes(app: FastifyInstance, host: OpenwopHost): void {
  // The router reads `:runId::fork` as one parameter, so the `{runId}:{action}` segment is matched here.
  app.post<{ Params: { runAction: string } }>('/v1/runs/:runAction', async (req, reply) => {
    const m = /^(.+):fork$/.exec(req.params.runAction);
    if (!m) throw new HostError(ErrorCode.NOT_FOUND, `no route POST ${req.url}`, { path: req.url });
    const who = callerOf(req);
    const body = checkBody<ForkRequest>('ForkRunRequest', req.body);
    const key = req.headers['idempotency-key'];
    if (key !== undefined && (typeof key !== 'string' || key.length < 1 || key.length > 255)) {
      throw new HostError(ErrorCode.VALIDATION_ERROR, 'Idempotency-Key must be 1-255 characters', {
        path: 'header:Idempotency-Key',
      });
    }
    const { fork, created } = await host.replay.fork(m[1]!, body, who, key);
    void reply.header('location', `/v1/runs/${fork.runId}`);
    return reply.status(created ? 201 : 200).send(fork);
  });
}
