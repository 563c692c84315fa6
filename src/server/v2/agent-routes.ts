import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ErrorCode, HostError } from '../../core/index.js';
import type { AgentInventory } from '../../openwop/agents/agent-inventory.js';

/**
 * `GET /agents` and `GET /agents/{agentId}` (v2 openapi `listAgents` / `getAgent`, RFC 0072 §A): the same
 * host-global manifest-agent inventory `/v1/agents` reads, `{agents, total}` and one entry. A host without the
 * manifest-runtime family treats the operations as absent: `404 not_found` (the v2 operations' 404 row), as is an
 * agent that is not installed.
 */
export function registerV2AgentRoutes(app: FastifyInstance, inventory: AgentInventory | undefined): void {
  const installed = (): AgentInventory => {
    if (!inventory)
      throw new HostError(ErrorCode.NOT_FOUND, 'this host does not install manifest agents', {
        capability: 'agents.manifestRuntime',
      });
    return inventory;
  };
  app.get('/agents', { config: { operationId: 'listAgents' } }, async () => installed().list());
  app.get<{ Params: { agentId: string } }>(
    '/agents/:agentId',
    { config: { operationId: 'getAgent' } },
    async (req: FastifyRequest<{ Params: { agentId: string } }>) => {
      const entry = installed().get(req.params.agentId);
      if (!entry)
        throw new HostError(ErrorCode.NOT_FOUND, 'no such agent is installed', { agentId: req.params.agentId });
      return entry;
    },
  );
}
