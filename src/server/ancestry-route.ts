import type { FastifyInstance } from 'fastify';
import { ErrorCode, HostError } from '../core/index.js';
import { causationOf } from '../openwop/causation/causation-link.js';
import type { AncestryCause } from '../openwop/causation/causation-link.js';
import type { OpenwopHost } from '../openwop/host.js';

/** `GET /v1/runs/{runId}/ancestry` (RFC 0040 §C, run-ancestry-response): the run's immediate parent, or null. */
export interface RunAncestry {
  runId: string;
  hostId: string;
  parent: { runId: string; hostId: string; cause: AncestryCause; wellKnownUrl?: string } | null;
}

const RUN_ID = /^[\x21-\x7e]{1,128}$/;

/** True while the host advertises `crossHostCausation.ancestryEndpointSupported` (the route is served only then). */
export function ancestryAdvertised(host: OpenwopHost): boolean {
  const caps = host.capabilities() as {
    multiAgent?: { executionModel?: { crossHostCausation?: { ancestryEndpointSupported?: unknown } } };
  };
  return caps.multiAgent?.executionModel?.crossHostCausation?.ancestryEndpointSupported === true;
}

/** The ancestry of `runId`: a local parent by `parentRunId`, a remote one by the run's causation link. */
export async function runAncestry(host: OpenwopHost, runId: string): Promise<RunAncestry> {
  if (!RUN_ID.test(runId))
    throw new HostError(ErrorCode.VALIDATION_ERROR, 'runId must be 1-128 printable characters', { path: '/runId' });
  const run = await host.store.getRun(runId);
  if (!run) throw new HostError(ErrorCode.NOT_FOUND, `run ${runId} not found`, { runId });
  let link;
  try {
    link = causationOf(run.metadata);
  } catch {
    link = undefined; // a malformed link (never accepted by POST /v1/runs) names no parent
  }
  let parent: RunAncestry['parent'] = null;
  if (run.parentRunId) {
    // Same host: core.dispatch records its causation link on the child; core.subWorkflow does not.
    parent = { runId: run.parentRunId, hostId: host.hostId, cause: link ? 'core.dispatch' : 'core.subWorkflow' };
  } else if (link && link.hostId !== host.hostId) {
    parent = {
      runId: link.parentRunId,
      hostId: link.hostId,
      cause: link.cause ?? 'core.subWorkflow',
      ...(link.wellKnownUrl ? { wellKnownUrl: link.wellKnownUrl } : {}),
    };
  }
  return { runId, hostId: host.hostId, parent };
}

/**
 * Registers `GET /v1/runs/{runId}/ancestry`. Served only while the host advertises
 * `crossHostCausation.ancestryEndpointSupported` (else `404 not_found`, multi-agent-execution.md); an unknown run is
 * `not_found`, a malformed id `validation_error`. A client walks a cross-host chain one hop at a time through
 * `parent.wellKnownUrl`.
 */
export function registerAncestryRoute(app: FastifyInstance, host: OpenwopHost): void {
  app.get<{ Params: { runId: string } }>('/v1/runs/:runId/ancestry', async (req) => {
    if (!ancestryAdvertised(host))
      throw new HostError(ErrorCode.NOT_FOUND, 'this host does not serve the run ancestry endpoint', {});
    return runAncestry(host, req.params.runId);
  });
}
