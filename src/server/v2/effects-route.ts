import type { FastifyInstance } from 'fastify';
import { ErrorCode, HostError } from '../../core/index.js';
import type { OpenwopHost } from '../../openwop/host.js';
import { runEffects } from '../../openwop/run-effects.js';
import type { EffectLedger } from '../../openwop/run-effects.js';
import { projectRunEffects, runIdFromParam } from '../../openwop/v2/index.js';
import { callerOf } from '../auth.js';

/**
 * `GET /runs/{runId}/effects` (v2 `getRunEffects`, idempotency.md §"Witness", runs.md §Surface gates): the run's
 * Layer-2 effect ledger, `{ runId, effects[] }` in claim order: the run's MCP tool calls, model calls, remote runs and
 * governed commands, read by run id (a run created under either major). Mounted only with the host ledger; while the
 * discovery document does not advertise `idempotency` (the gate) it answers `404`, as an unadvertised gated operation
 * does. `404 not_found` for no such run.
 */
export function registerV2EffectsRoute(app: FastifyInstance, host: OpenwopHost, ledger: EffectLedger): void {
  app.get<{ Params: { runId: string } }>(
    '/runs/:runId/effects',
    { config: { operationId: 'getRunEffects' } },
    async (req) => {
      callerOf(req);
      if (host.capabilities().idempotency === undefined)
        throw new HostError(ErrorCode.NOT_FOUND, 'idempotency is not advertised: no effect ledger is served');
      const runId = runIdFromParam(req.params.runId);
      if (!(await host.store.getRun(runId))) throw new HostError(ErrorCode.NOT_FOUND, 'run not found');
      return projectRunEffects(runId, await runEffects(host.effects, ledger, runId));
    },
  );
}
