import type { FastifyInstance } from 'fastify';
import { ErrorCode, HostError } from '../core/index.js';
import type { OpenwopHost } from '../openwop/host.js';
import type { CreateRunRequest } from '../openwop/types.js';
import { callerOf } from './auth.js';
import { INTERRUPT_QUERY, checkBody } from './request-schemas.js';
import { checkInboundCausation, validTraceparent } from '../openwop/causation/causation-link.js';

/**
 * Run routes: `POST /v1/runs` (with `Idempotency-Key`), `GET /v1/runs/{runId}`,
 * `POST /v1/runs/{runId}/cancel`, `POST /v1/runs/{runId}/interrupts/{nodeId}`, and the workflow
 * registry `POST /v1/workflows`, `GET /v1/workflows`, `GET /v1/workflows/{workflowId}`.
 */
export function registerRunRoutes(app: FastifyInstance, host: OpenwopHost): void {
  app.post('/v1/runs', async (req, reply) => {
    const body = checkBody<CreateRunRequest>('CreateRunRequest', req.body);
    const key = req.headers['idempotency-key'];
    if (key !== undefined && (typeof key !== 'string' || key.length < 1 || key.length > 255)) {
      throw new HostError(ErrorCode.VALIDATION_ERROR, 'Idempotency-Key must be 1-255 characters', {
        path: 'header:Idempotency-Key',
      });
    }
    // RFC 0040: a run caused on another host names it (metadata.causation) and continues its trace (traceparent).
    const traceparent = validTraceparent(req.headers.traceparent);
    checkInboundCausation(body.metadata, host.hostId);
    const who = callerOf(req);
    const { run, created } = await host.runs.createRun(body, who, key, traceparent ? { traceparent } : {});
    const snap = await host.runs.snapshot(run.runId);
    void reply.header('location', `/v1/runs/${run.runId}`);
    // W3C Trace Context level 2: the run's own span context, in the caller's trace when it sent one.
    if (run.traceparent) void reply.header('traceresponse', run.traceparent);
    if (!created) void reply.header('idempotent-replayed', 'true');
    return reply.status(created ? 201 : 200).send(snap);
  });

  app.get<{ Params: { runId: string } }>('/v1/runs/:runId', (req) => host.runs.snapshot(req.params.runId));

  app.post<{ Params: { runId: string } }>('/v1/runs/:runId/cancel', async (req, reply) => {
    const body = checkBody<{ reason?: string }>('CancelRunRequest', req.body);
    const snap = await host.runs.cancel(req.params.runId, callerOf(req), body.reason);
    // A run already over answers 200 as it is (idempotent cancel); a cascade still settling answers 202 `cancelling`.
    return reply.status(snap.status === 'cancelling' ? 202 : 200).send(snap);
  });

  app.post<{ Params: { runId: string; nodeId: string }; Querystring: { interruptId?: string } }>(
    '/v1/runs/:runId/interrupts/:nodeId',
    { schema: { querystring: INTERRUPT_QUERY } },
    async (req) => {
      const body = checkBody<Record<string, unknown>>('ResolveInterruptRequest', req.body);
      const { interruptId } = req.query;
      return host.runs.resolveInterrupt(req.params.runId, req.params.nodeId, body, callerOf(req), interruptId);
    },
  );

  // Operator only (route-roles.ts); each new definition is a version with its digest, recorded (issue 20).
  app.post('/v1/workflows', async (req, reply) => {
    const who = callerOf(req);
    const { workflow, version } = await host.catalog.registerAs(req.body, 'api', {
      id: who.principal,
      name: who.name ?? who.principal,
      role: who.role ?? 'client',
    });
    return reply
      .status(201)
      .send({ workflowId: workflow.id, version: workflow.version, digest: version.digest, revision: version.seq });
  });

  app.get('/v1/workflows', async () => ({ workflows: await host.catalog.list() }));

  app.get<{ Params: { workflowId: string } }>('/v1/workflows/:workflowId', async (req) => {
    const wf = await host.catalog.get(req.params.workflowId);
    if (!wf)
      throw new HostError(ErrorCode.NOT_FOUND, `workflow ${req.params.workflowId} is not registered`, {
        workflowId: req.params.workflowId,
      });
    return wf;
  });
}
