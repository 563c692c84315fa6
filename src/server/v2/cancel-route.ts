import type { FastifyInstance } from 'fastify';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { ErrorCode, HostError } from '../../core/index.js';
import type { OpenwopHost } from '../../openwop/host.js';
import { TERMINAL_STATUSES } from '../../openwop/types.js';
import { bindRunId, runIdFromParam } from '../../openwop/v2/index.js';
import { callerOf } from '../auth.js';

const validBody = new Ajv2020({ strict: false }).compile({
  type: 'object',
  properties: { reason: { type: 'string', maxLength: 1000 } },
  additionalProperties: false,
});

/**
 * `POST /runs/{runId}/cancel` (v2 runs.md §Cancel): `{ reason? }` → `200 { runId, status }` with `status`
 * `cancelling` or `cancelled`; a run already terminal is `409 run_terminal` (a 200 echoing the terminal state is
 * non-conformant under major 2).
 */
export function registerV2CancelRoute(app: FastifyInstance, host: OpenwopHost): void {
  app.post<{ Params: { runId: string } }>(
    '/runs/:runId/cancel',
    { config: { operationId: 'cancelRun' } },
    async (req) => {
      const who = callerOf(req);
      const body = req.body ?? {};
      if (!validBody(body))
        throw new HostError(ErrorCode.VALIDATION_ERROR, 'the cancel body is not valid', { field: 'reason' });
      const runId = runIdFromParam(req.params.runId);
      const run = await host.store.getRun(runId);
      if (!run) throw new HostError(ErrorCode.NOT_FOUND, 'run not found');
      const terminal = (status: string): HostError =>
        new HostError(ErrorCode.RUN_TERMINAL, `the run is already ${status}`, { runStatus: status });
      if (TERMINAL_STATUSES.has(run.status)) throw terminal(run.status);
      let snap;
      try {
        snap = await host.runs.cancel(runId, who, (body as { reason?: string }).reason);
      } catch (err) {
        // It ended between the read and the cancel.
        const now = await host.store.getRun(runId);
        if (err instanceof HostError && err.code === ErrorCode.CONFLICT && now && TERMINAL_STATUSES.has(now.status))
          throw terminal(now.status);
        throw err;
      }
      return { runId: bindRunId(runId), status: snap.status === 'cancelled' ? 'cancelled' : 'cancelling' };
    },
  );
}
