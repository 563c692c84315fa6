/**
 * The run the MCP invoke seam drives (host-sample-test-seams.md §23, under the v2 seams profile): one
 * `ctx.mcp.listTools` against a server the suite names, through the production `ctx.mcp` surface (mcp-family.ts
 * `mcpSurface`) over a pool with the family's options and the operator's revision policy, so the negotiation is the
 * production one (SDK version negotiation within the ladder, the floor, the HOST-020 check) and its
 * `negotiation.decided` lands on this run's log (RFC 0242 §B.1). The outcome is left in the run's `outcome` variable
 * for the seam to answer with. Installed with the test seams, where the `mcp` family is.
 */
import { ErrorCode, HostError, isoAt } from '../../core/index.js';
import { NodeFailure } from '../node-registry.js';
import type { NodeModule } from '../node-registry.js';
import type { ServiceFamily } from '../service-family.js';
import type { McpFamily } from '../services/mcp-family.js';
import { mcpSurface } from '../services/mcp-family.js';
import { McpHealth } from '../services/mcp-health.js';
import { NEGOTIATION_DECIDED, peerDigestOf } from '../services/mcp-negotiation.js';
import type { NegotiationDecided } from '../services/mcp-negotiation.js';
import { MCP_MODERN_REVISION, belowFloor } from '../services/mcp-revisions.js';
import type { McpHttpServer, McpServersConfig } from '../services/mcp-servers-config.js';
import { mcpNodeFailure } from './mcp-nodes.js';

/** The workflow the MCP invoke seam runs: `inputs.serverUrl`, optional `inputs.requestVersion`. */
export const MCP_INVOKE_WORKFLOW = 'conformance-mcp-invoke';

/** The fixture's node type. */
export const MCP_INVOKE_NODE = 'core.conformance.mcp-invoke';

/** The server id of the suite's server in the invoke pool. */
const INVOKE = 'conformance-invoke';

/** What the run found, in its `outcome` variable. */
export type McpInvokeOutcome =
  { negotiatedVersion: string } | { refused: { requested: string; supported: string[]; reason: string } };

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

/** `core.conformance.mcp-invoke` over `mcp`. Side-effecting (it reaches an MCP server). */
export function mcpInvokeNode(mcp: McpFamily): NodeModule {
  return {
    typeId: MCP_INVOKE_NODE,
    async execute(ctx) {
      const url = str(ctx.variables.serverUrl);
      if (!url) throw new NodeFailure(ErrorCode.VALIDATION_ERROR, 'serverUrl is required');
      const requested = str(ctx.variables.requestVersion);
      const base = mcp.connections.config;
      const ladder = mcp.connections.ladder();
      const entry: McpHttpServer = { transport: 'streamable-http', url };
      const refused = (r: string, reason: string) => ({
        outputs: {},
        variables: { outcome: { refused: { requested: r, supported: ladder.revisions, reason } } },
      });
      // A revision the ladder does not hold is refused before anything is sent, and recorded (interop.md §The floor).
      if (requested !== undefined && !ladder.revisions.includes(requested)) {
        const reason = belowFloor(requested, ladder.minimumRevision) ? 'below-floor' : 'unsupported-revision';
        const decision: NegotiationDecided = {
          protocol: 'mcp',
          outcome: 'refused',
          requested,
          floor: ladder.minimumRevision,
          peerDigest: peerDigestOf(entry),
          reason,
          at: isoAt(ctx.clock.now()),
        };
        await ctx.emit([{ type: NEGOTIATION_DECIDED, payload: { ...decision } }]);
        return refused(requested, reason);
      }
      // A rung named: the modern one is pinned, an `initialize` rung asks by the legacy handshake (the floor stays).
      const protocol =
        requested === undefined ? base.protocol : requested === MCP_MODERN_REVISION ? 'modern' : 'legacy';
      const config: McpServersConfig = {
        servers: { [INVOKE]: entry },
        ...(protocol ? { protocol } : {}),
        minimumRevision: ladder.minimumRevision,
        ...(base.requestTimeoutMs !== undefined ? { requestTimeoutMs: base.requestTimeoutMs } : {}),
      };
      const pool = mcp.pool(config);
      try {
        const surface = mcpSurface(pool, new McpHealth(pool, ctx.clock, 0), ctx);
        try {
          await surface.listTools(INVOKE);
        } catch (err) {
          if (err instanceof HostError && err.code === ErrorCode.INTEROP_VERSION_UNSUPPORTED)
            return refused(requested ?? pool.ladder().preferredVersion, 'unsupported-revision');
          throw mcpNodeFailure(err);
        }
        const negotiatedVersion = await pool.revision(INVOKE);
        return { outputs: { negotiatedVersion }, variables: { outcome: { negotiatedVersion } } };
      } finally {
        await pool.close();
      }
    },
  };
}

const WORKFLOW = {
  id: MCP_INVOKE_WORKFLOW,
  name: 'Conformance: one MCP exchange with a named server',
  version: '1.0',
  nodes: [{ id: 'invoke', typeId: MCP_INVOKE_NODE, name: 'Invoke', position: { x: 0, y: 0 }, config: {}, inputs: {} }],
  edges: [],
  triggers: [{ id: 'manual', type: 'manual', enabled: true }],
  variables: [
    { name: 'serverUrl', type: 'string', description: 'The MCP server (Streamable HTTP).', required: true },
    { name: 'requestVersion', type: 'string', description: 'The revision to ask for.' },
    { name: 'outcome', type: 'object', description: 'What the exchange decided (set by the node).' },
  ],
  metadata: { tags: ['conformance'] },
  settings: {},
};

/** The MCP invoke fixture (node and workflow) over the installed `mcp` family; it advertises nothing. */
export function conformanceMcpInvokeFamily(mcp: McpFamily): ServiceFamily {
  return {
    name: 'conformanceMcpInvoke',
    capabilities: () => ({}),
    nodes: [mcpInvokeNode(mcp)],
    workflows: () => [WORKFLOW],
  };
}
