import type { FastifyInstance } from 'fastify';
import { ErrorCode, HostError, toHostError } from '../../core/index.js';
import { lazyValidator } from '../../core/lazy-validator.js';
import type { OpenwopHost } from '../../openwop/host.js';
import { TERMINAL_STATUSES } from '../../openwop/types.js';
import type { Caller } from '../../openwop/node-registry.js';
import { bindRunId, runIdFromParam, toV2Error } from '../../openwop/v2/index.js';
import type { V2ErrorEnvelope } from '../../openwop/v2/index.js';
import { callerOf } from '../auth.js';
import type { RequestIdempotency } from './request-idempotency.js';

/** runs.md §Bulk cancel: the RECOMMENDED cap on `runIds`. */
export const BULK_CANCEL_MAX = 100;

const validBody = lazyValidator({
  type: 'object',
  properties: { reason: { type: 'string', maxLength: 1000 } },
  additionalProperties: false,
});
const validBulk = lazyValidator({
  type: 'object',
  required: ['runIds'],
  properties: {
    runIds: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
    reason: { type: 'string', maxLength: 512 },
  },
  additionalProperties: false,
});

const terminal = (status: string): HostError =>
  new HostError(ErrorCode.RUN_TERMINAL, `the run is already ${status}`, { runStatus: status });

/**
 * Cancels one run under major 2 (runs.md §Cancel): `{ runId, status }` with `status` `cancelling` or `cancelled`; a
 * run already terminal is `run_terminal` (a 200 echoing the terminal state is non-conformant under major 2).
 */
async function cancelOne(
  host: OpenwopHost,
  who: Caller,
  runId: string,
  reason: string | undefined,
): Promise<{ runId: string; status: 'cancelling' | 'cancelled' }> {
  const run = await host.store.getRun(runId);
  if (!run) throw new HostError(ErrorCode.NOT_FOUND, 'run not found');
  if (TERMINAL_STATUSES.has(run.status)) throw terminal(run.status);
  let snap;
  try {
    snap = await host.runs.cancel(runId, who, reason);
  } catch (err) {
    // It ended between the read and the cancel.
    const now = await host.store.getRun(runId);
    if (err instanceof HostError && err.code === ErrorCode.CONFLICT && now && TERMINAL_STATUSES.has(now.status))
      throw terminal(now.status);
    throw err;
  }
  return { runId: bindRunId(runId), status: snap.status === 'cancelled' ? 'cancelled' : 'cancelling' };
}

type BulkResult =
  | { runId: string; ok: true; status: 'cancelling' | 'cancelled' }
  | { runId: string; ok: false; error: V2ErrorEnvelope };

/**
 * `POST /runs/{runId}/cancel` (`{ reason? }` → `200 { runId, status }`) and `POST /runs:bulk-cancel` (runs.md §Bulk
 * cancel): `{ runIds[1..100], reason? }` → `200 { results[] }` in request order, each id cancelled on its own, a
 * failed entry `ok: false` with its v2 error envelope (`id_tenant_mismatch`, `not_found`, `run_terminal`, …); over the
 * cap `400 validation_error` with `details.maxRunIds`. An `Idempotency-Key` on either is honoured through `idem`
 * (request-idempotency.ts, idempotency.md Layer 1): a retried cancel is answered the first `200` with
 * `OpenWOP-Idempotent-Replay: true` rather than `409 run_terminal`.
 */
export function registerV2CancelRoute(app: FastifyInstance, host: OpenwopHost, idem?: RequestIdempotency): void {
  const digestOf = (req: { params: unknown; body: unknown }) => ({ params: req.params, body: req.body ?? null });
  app.post<{ Params: { runId: string } }>(
    '/runs/:runId/cancel',
    { config: { operationId: 'cancelRun' }, ...idem?.hooks('cancelRun', digestOf) },
    async (req) => {
      const who = callerOf(req);
      const body = req.body ?? {};
      if (!validBody(body))
        throw new HostError(ErrorCode.VALIDATION_ERROR, 'the cancel body is not valid', { field: 'reason' });
      return cancelOne(host, who, runIdFromParam(req.params.runId), (body as { reason?: string }).reason);
    },
  );

  app.post(
    '/runs::bulk-cancel',
    { config: { operationId: 'bulkCancelRuns' }, ...idem?.hooks('bulkCancelRuns', digestOf) },
    async (req) => {
      const who = callerOf(req);
      const body = req.body as { runIds?: unknown } | undefined;
      if (Array.isArray(body?.runIds) && body.runIds.length > BULK_CANCEL_MAX)
        throw new HostError(ErrorCode.VALIDATION_ERROR, `at most ${BULK_CANCEL_MAX} runIds`, {
          field: 'runIds',
          maxRunIds: BULK_CANCEL_MAX,
        });
      if (!validBulk(body))
        throw new HostError(ErrorCode.VALIDATION_ERROR, 'the bulk-cancel body is not valid', { field: 'runIds' });
      const { runIds, reason } = body as { runIds: string[]; reason?: string };
      const results: BulkResult[] = [];
      // One at a time, in request order: each id is independent, and its outcome does not depend on the others.
      for (const id of runIds) {
        try {
          const r = await cancelOne(host, who, runIdFromParam(id), reason);
          results.push({ runId: id, ok: true, status: r.status });
        } catch (err) {
          results.push({ runId: id, ok: false, error: toV2Error(toHostError(err, ErrorCode.INTERNAL)).body });
        }
      }
      return { results };
    },
  );
}
