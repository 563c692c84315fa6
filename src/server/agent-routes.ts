import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ErrorCode, HostError } from '../core/index.js';
import { AGENT_INVENTORY_ENTRY_SCHEMA, AGENT_INVENTORY_RESPONSE_SCHEMA } from '../openwop/agents/agent-inventory.js';
import type { AgentInventory } from '../openwop/agents/agent-inventory.js';

type IdRequest = FastifyRequest<{ Params: { agentId: string } }>;

/**
 * The read-only manifest-agent inventory (RFC 0072 §A, RFC 0074 `installScope: "host"`), mounted when the
 * manifest-runtime family is installed (`serve --agent-packs`): `GET /v1/agents` → `{agents, total}` (agentId
 * order) and `GET /v1/agents/{agentId}` → one entry, or `404 not_found`. Entries carry no prompt body, handoff
 * schema or secret (SR-1). Without the family both answer 501 `capability_not_provided`. Authentication is the
 * `/v1` bearer check the app applies before any route; every caller sees the same host-global set.
 */
export function registerAgentRoutes(app: FastifyInstance, inventory: AgentInventory | undefined): void {
  if (!inventory) {
    const refuse = (): never => {
      throw new HostError(ErrorCode.CAPABILITY_NOT_PROVIDED, 'this host does not install manifest agents', {
        capability: 'agents.manifestRuntime',
      });
    };
    for (const path of ['/v1/agents', '/v1/agents/:agentId']) app.get(path, refuse);
    return;
  }
  app.get('/v1/agents', async () => inventory.list());
  app.get('/v1/agents/:agentId', async (req: IdRequest) => {
    const entry = inventory.get(req.params.agentId);
    if (!entry) throw new HostError(ErrorCode.NOT_FOUND, 'no such agent is installed', { agentId: req.params.agentId });
    return entry;
  });
}

const json = (schema: Record<string, unknown>): Record<string, unknown> => ({ 'application/json': { schema } });
const err = (description: string): Record<string, unknown> => ({
  description,
  content: json({ $ref: '#/components/schemas/Error' }),
});
const unsupported = { '501': err('capability_not_provided: the host was started without --agent-packs') };

/** OpenAPI 3.1 paths of the inventory operations (RFC 0072 §A), merged into `/v1/openapi.json`. */
export const agentOpenApiPaths: Record<string, unknown> = {
  '/v1/agents': {
    get: {
      operationId: 'listAgents',
      summary: 'Installed manifest agents (host-global inventory, agentId order); no prompt bodies or secrets',
      responses: {
        '200': { description: 'the inventory', content: json(AGENT_INVENTORY_RESPONSE_SCHEMA) },
        '401': err('unauthorized'),
        ...unsupported,
      },
    },
  },
  '/v1/agents/{agentId}': {
    get: {
      operationId: 'getAgent',
      summary: 'One installed manifest agent',
      parameters: [{ name: 'agentId', in: 'path', required: true, schema: { type: 'string' } }],
      responses: {
        '200': { description: 'the inventory entry', content: json(AGENT_INVENTORY_ENTRY_SCHEMA) },
        '401': err('unauthorized'),
        '404': err('not_found: no agent with this id is installed'),
        ...unsupported,
      },
    },
  },
};
