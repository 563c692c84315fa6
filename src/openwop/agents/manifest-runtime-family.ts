import { sha256Hex } from '../../core/index.js';
import type { Clock } from '../../core/index.js';
import type { Db } from '../../ledger/index.js';
import type { NodeContext, NodeModule } from '../node-registry.js';
import type { ServiceFamily } from '../service-family.js';
import type { WorkflowDefinition, WorkflowNode } from '../types.js';
import { packFolders, resolvePack } from './agent-packs.js';
import type { PromptLookup, RefusedPack } from './agent-packs.js';
export { MET_BY_FLOOR } from './agent-packs.js';
import { AgentRegistry } from './agent-registry.js';
import { MANIFEST_AGENT_NODE, manifestAgentNode } from './manifest-agent-node.js';
import type { AgentModel, AgentTool } from './manifest-agent-node.js';
import { providerUsageCapability } from '../services/provider-usage.js';

/** Options of {@link createManifestRuntimeFamily}. */
export interface ManifestRuntimeOptions {
  db: Db;
  clock: Clock;
  /** Folder of agent packs to install at start: each sub-folder with a `pack.json` (RFC 0003). */
  packsDir?: string;
  /** The prompt library, for `systemPromptRef: "prompt:<id>[@<version>]"` (pinned at install). */
  prompts?: PromptLookup;
  /** Pack `peerDependencies` this host meets (default {@link MET_BY_FLOOR}: it includes `host.agentRuntime`). */
  capabilitiesMet?: ReadonlySet<string>;
  /** The model behind every manifest agent (the CLI's scripted provider; no network). */
  model: AgentModel;
  /** Host tools by toolId (default: `openwop:echo`). */
  tools?: ReadonlyMap<string, AgentTool>;
  /** Secret plaintexts never written to events, variables or handoff payloads (SR-1). */
  secrets?: () => readonly string[];
  /** Validate task / return payloads against the agents' handoff schemas (default true). */
  handoffValidation?: boolean;
  /** Most model turns per dispatched agent (default 8). */
  maxTurns?: number;
}

/** The manifest-runtime family, with the registry and the outcome of this start's installs. */
export interface ManifestRuntimeFamily extends ServiceFamily {
  readonly registry: AgentRegistry;
  /** Packs installed (or already installed) from `packsDir` at this start. */
  readonly installed: string[];
  readonly refused: RefusedPack[];
  /** The secret plaintexts kept out of what the host shows (SR-1; also the `GET /v1/agents` inventory). */
  readonly secrets: () => readonly string[];
}

/** The built-in host tools: `openwop:echo` returns its arguments. */
export const DEFAULT_AGENT_TOOLS: ReadonlyMap<string, AgentTool> = new Map([
  [
    'openwop:echo',
    {
      description: 'Returns its arguments.',
      inputSchema: { type: 'object' },
      call: (args: Record<string, unknown>) => Promise.resolve({ echo: args }),
    },
  ],
]);

/** Id of the host workflow that runs manifest agent `agentId` as a child run (workflow ids cannot hold dots). */
export function agentWorkflowId(agentId: string): string {
  return `agent-${sha256Hex(agentId).slice(0, 16)}`;
}

function agentWorkflow(agentId: string, persona: string): WorkflowDefinition {
  return {
    id: agentWorkflowId(agentId),
    name: `${persona} (${agentId})`.slice(0, 200),
    version: '1',
    nodes: [
      {
        id: 'agent',
        name: persona,
        position: { x: 0, y: 0 },
        config: { agentId },
        inputs: {},
        typeId: MANIFEST_AGENT_NODE,
      },
    ],
    edges: [],
    triggers: [{ id: 'manual', type: 'manual' }],
    variables: [],
    metadata: { manifestAgent: agentId },
    settings: {},
  } as unknown as WorkflowDefinition;
}

/**
 * `core.dispatch` with manifest agents as workers: a `nextWorkerIds` entry naming an installed agent starts that
 * agent's host workflow as the child run (dispatch-config `workerDispatchModel: child-run`); any other entry is
 * a workflow id as before. The handoff machine, mappings and causation are the dispatch node's own.
 */
function dispatchLayer(registry: AgentRegistry): (node: WorkflowNode, mod: NodeModule) => NodeModule | undefined {
  return (node, mod) => {
    if (node.typeId !== 'core.dispatch') return undefined;
    return {
      ...mod,
      execute(ctx) {
        const c = Object.create(ctx) as NodeContext;
        Object.defineProperty(c, 'children', {
          value: {
            start: (o: Parameters<NodeContext['children']['start']>[0]) =>
              ctx.children.start(registry.has(o.workflowId) ? { ...o, workflowId: agentWorkflowId(o.workflowId) } : o),
            settled: (runId: string) => ctx.children.settled(runId),
          },
        });
        return mod.execute(c);
      },
    };
  };
}

/**
 * The agent-manifest runtime floor (RFC 0070 `agents.manifestRuntime`): installs each pack of `packsDir` into the
 * durable {@link AgentRegistry} (RFC 0003 `installAgents`; a bad pack is refused with its code and the others
 * still install), registers one host workflow per installed agent, lets `core.dispatch` dispatch an installed
 * agent by its agentId, and runs it with its toolAllowlist enforced and (by default) handoff validation.
 */
export async function createManifestRuntimeFamily(o: ManifestRuntimeOptions): Promise<ManifestRuntimeFamily> {
  const registry = new AgentRegistry(o.db, o.clock);
  await registry.init();
  const installed: string[] = [];
  const refused: RefusedPack[] = [];
  for (const dir of o.packsDir ? packFolders(o.packsDir) : []) {
    const r = await resolvePack(dir, o.prompts, o.capabilitiesMet);
    if (!r.ok) {
      refused.push(r.refused);
      continue;
    }
    const i = await registry.install(r.pack, `dir:${dir}`);
    if (i.ok) installed.push(`${r.pack.name}@${r.pack.version}`);
    else refused.push(i.refused);
  }
  const handoffValidation = o.handoffValidation ?? true;
  const secrets = o.secrets ?? (() => []);
  return {
    name: 'manifestRuntime',
    registry,
    installed,
    refused,
    secrets,
    capabilities: () => ({
      // RFC 0074: one host-global inventory, served as GET /v1/agents (src/server/agent-routes.ts).
      agents: { manifestRuntime: { supported: true, handoffValidation, installScope: 'host' } },
      ...providerUsageCapability(o.model),
    }),
    nodes: [
      manifestAgentNode({
        registry,
        model: o.model,
        tools: o.tools ?? DEFAULT_AGENT_TOOLS,
        secrets,
        handoffValidation,
        maxTurns: o.maxTurns ?? 8,
      }),
    ],
    workflows: () => registry.list().map((a) => agentWorkflow(a.manifest.agentId, a.manifest.persona)),
    wrap: dispatchLayer(registry),
  };
}
