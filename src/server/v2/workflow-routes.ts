import type { FastifyInstance } from 'fastify';
import { ErrorCode, HostError } from '../../core/index.js';
import type { OpenwopHost } from '../../openwop/host.js';
import { bindRunId, projectWorkflow, runIdFromParam } from '../../openwop/v2/index.js';
import { ancestryAdvertised, runAncestry } from '../ancestry-route.js';

// ids.schema.json `$defs/workflowId` (author-minted).
const WORKFLOW_ID = /^[A-Za-z0-9._~:-]{1,128}$/;

/**
 * `GET /workflows/{workflowId}` (v2 openapi `getWorkflow`: the catalog definition as the v2 `WorkflowDefinition`) and `GET /runs/{runId}/ancestry` (`getRunAncestry`, v2
 * runs.md §Diff and ancestry, RFC 0040 §C), over the catalog and the ancestry `/v1/` reads. Ancestry is served only
 * while the host advertises `crossHostCausation.ancestryEndpointSupported` (else `404 not_found`); its run ids are
 * tenant-bound (identity.md §5), a remote parent's id as that host minted it.
 */
export function registerV2WorkflowRoutes(app: FastifyInstance, host: OpenwopHost): void {
  app.get<{ Params: { workflowId: string } }>(
    '/workflows/:workflowId',
    { config: { operationId: 'getWorkflow' } },
    async (req) => {
      const { workflowId } = req.params;
      if (!WORKFLOW_ID.test(workflowId))
        throw new HostError(ErrorCode.VALIDATION_ERROR, 'workflowId is not a v2 workflow id', { field: 'workflowId' });
      const wf = await host.catalog.get(workflowId);
      if (!wf) throw new HostError(ErrorCode.NOT_FOUND, `workflow ${workflowId} is not registered`, { workflowId });
      return projectWorkflow(wf);
    },
  );

  app.get<{ Params: { runId: string } }>(
    '/runs/:runId/ancestry',
    { config: { operationId: 'getRunAncestry' } },
    async (req) => {
      if (!ancestryAdvertised(host))
        throw new HostError(ErrorCode.NOT_FOUND, 'this host does not serve the run ancestry endpoint');
      const a = await runAncestry(host, runIdFromParam(req.params.runId));
      const parent = a.parent && {
        ...a.parent,
        runId: a.parent.hostId === host.hostId ? bindRunId(a.parent.runId) : a.parent.runId,
      };
      return { runId: bindRunId(a.runId), hostId: a.hostId, parent };
    },
  );
}
