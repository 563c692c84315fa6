import type { FastifyInstance } from 'fastify';
import { ErrorCode, HostError } from '../../core/index.js';
import { lazyValidator } from '../../core/lazy-validator.js';
import type { OpenwopHost } from '../../openwop/host.js';
import { TERMINAL_STATUSES } from '../../openwop/types.js';
import { runIdFromParam } from '../../openwop/v2/index.js';
import { callerOf } from '../auth.js';
import type { RequestIdempotency } from './request-idempotency.js';
import { INTERRUPT_QUERY } from '../request-schemas.js';
import { v2Snapshot } from './run-routes.js';

const validBody = lazyValidator({
  type: 'object',
  required: ['resumeValue'],
  properties: { resumeValue: {} },
  additionalProperties: false,
});

/**
 * `POST /runs/{runId}/interrupts/{nodeId}` (v2 interrupt.md §Resolve surfaces): the closed body `{ resumeValue }`
 * (for an approval, `{ action, feedback?, refineFeedback?, editedArtifactData? }`) resolves the node's pending
 * interrupt through the engine and answers `200` with the run's v2 snapshot. `400 validation_error` for a value the
 * interrupt refuses, `404 not_found` for no such run or node, `409 interrupt_already_resolved` when the node's
 * interrupt was already resolved or the run has ended (§Errors). An `Idempotency-Key` is honoured through `idem`
 * (request-idempotency.ts): a duplicate is answered from the record of the first resolve.
 */
export function registerV2InterruptRoute(app: FastifyInstance, host: OpenwopHost, idem?: RequestIdempotency): void {
  app.post<{ Params: { runId: string; nodeId: string }; Querystring: { interruptId?: string } }>(
    '/runs/:runId/interrupts/:nodeId',
    {
      schema: { querystring: INTERRUPT_QUERY },
      config: { operationId: 'resolveInterruptByRun' },
      ...idem?.hooks('resolveInterruptByRun', (req) => {
        const q = req.query as { interruptId?: string } | undefined;
        return { params: req.params, ...(q?.interruptId ? { query: q } : {}), body: req.body ?? null };
      }),
    },
    async (req) => {
      const who = callerOf(req);
      const body = req.body ?? {};
      if (!validBody(body))
        throw new HostError(ErrorCode.VALIDATION_ERROR, 'the resolve body is {resumeValue}', { field: 'resumeValue' });
      const runId = runIdFromParam(req.params.runId);
      const { nodeId } = req.params;
      const { interruptId } = req.query;
      const run = await host.store.getRun(runId);
      if (!run) throw new HostError(ErrorCode.NOT_FOUND, 'run not found');
      const resolved = async (): Promise<boolean> =>
        (await host.store.events(runId)).some(
          (e) =>
            e.type === 'interrupt.resolved' &&
            e.nodeId === nodeId &&
            (!interruptId || e.payload.interruptId === interruptId),
        );
      const already = (): HostError =>
        new HostError(ErrorCode.INTERRUPT_ALREADY_RESOLVED, 'the interrupt is already resolved', { nodeId });
      if (TERMINAL_STATUSES.has(run.status)) throw already();
      const pending = (await host.runs.snapshot(runId)).pendingInterrupts.some(
        (p) => p.nodeId === nodeId && (!interruptId || p.interruptId === interruptId),
      );
      if (!pending) {
        if (await resolved()) throw already();
        throw new HostError(ErrorCode.NOT_FOUND, 'no interrupt at that node', { nodeId });
      }
      try {
        await host.runs.resolveInterrupt(runId, nodeId, body as unknown as Record<string, unknown>, who, interruptId);
      } catch (err) {
        // A concurrent resolve won (exactly one succeeds, §Resolve surfaces).
        if (err instanceof HostError && (err.code === ErrorCode.NOT_FOUND || err.code === ErrorCode.CONFLICT))
          throw already();
        throw err;
      }
      return v2Snapshot(host, runId);
    },
  );
}
