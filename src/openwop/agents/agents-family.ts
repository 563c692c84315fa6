import type { NodeModule } from '../node-registry.js';
import { dispatchNode, mockAgentNode, supervisorNode } from '../nodes/orchestrator-nodes.js';
import type { ServiceFamily } from '../service-family.js';
import type { EnvelopeModel } from '../services/ai-envelope-model.js';
import { providerUsageCapability } from '../services/provider-usage.js';
import type { WorkflowNode } from '../types.js';
import { agentRefOf, resolveAgentId, runAgentScript, scriptFromConfig } from './agent-script.js';
import { SPEC_CONFIDENCE_FLOOR } from './confidence.js';

/** Options of {@link agentsFamily}. */
export interface AgentsFamilyOptions {
  /** This host's id, carried into child runs as the origin of their causation (default `mhs-host`). */
  hostId?: string;
  /** Operator confidence floor for orchestrator decisions, at least the spec floor 0.5 (RFC 0039 §A). */
  confidenceEscalationFloor?: number;
  /** The host model the supervisor asks when a workflow gives no mock plan (`serve --model`). */
  model?: EnvelopeModel;
  /** The model a run names with `RunOptions.configurable.model` (unset: that key is ignored). */
  runModelOf?: (value: string) => EnvelopeModel;
}

/** Node types that emit their own `agent.*` events, so the agent layer does not wrap them. */
const AGENT_NATIVE: ReadonlySet<string> = new Set([
  'core.orchestrator.supervisor',
  'core.dispatch',
  'core.conformance.mock-agent',
]);

/**
 * Agent identity for a node pinned to an agent (`nodes[].agent`): before the node's own work, the agent's
 * scripted `agent.*` events (mock-agent config keys in the node config) are emitted once, and a decision
 * below the escalation threshold (default 0.7) suspends the node until it is ratified. Undefined for a node
 * without a pin.
 */
export function agentLayer(node: WorkflowNode, mod: NodeModule): NodeModule | undefined {
  if (!agentRefOf(node) || AGENT_NATIVE.has(node.typeId)) return undefined;
  return {
    ...mod,
    async execute(ctx) {
      const agentId = resolveAgentId(ctx.node);
      await runAgentScript(ctx, agentId, scriptFromConfig(ctx.node.config, agentId), { streaming: true });
      return mod.execute(ctx);
    },
  };
}

/**
 * The multi-agent family: agent identity with the confidence floor (RFC 0002 / 0023 / 0024), the
 * supervisor → dispatch → harvest loop with the handoff machine (RFC 0006 / 0007 / 0022 / 0037) and the
 * orchestrator confidence escalation (RFC 0039 §A). Advertises `agents` and `multiAgent.executionModel`
 * version 2 (the memory half of version 2 applies only with `memory.supported`, which this host does not
 * advertise) and `conformance.mockAgent`.
 */
export function agentsFamily(o: AgentsFamilyOptions = {}): ServiceFamily {
  const floor = Math.min(1, Math.max(SPEC_CONFIDENCE_FLOOR, o.confidenceEscalationFloor ?? SPEC_CONFIDENCE_FLOOR));
  return {
    name: 'agents',
    capabilities: () => ({
      agents: {
        supported: true,
        profile: 'mhs-host-agents-mock',
        orchestrator: true,
        dispatch: true,
        dispatchMapping: true,
        reasoning: { verbosity: 'full', streaming: true },
      },
      multiAgent: {
        executionModel: {
          supported: true,
          version: 2,
          ...(floor > SPEC_CONFIDENCE_FLOOR ? { confidenceEscalationFloor: floor } : {}),
          confidenceEscalationInterruptKind: 'clarification',
        },
      },
      conformance: { mockAgent: true },
      ...providerUsageCapability(o.model ?? {}),
    }),
    nodes: [
      supervisorNode(o.model, o.runModelOf),
      dispatchNode({ hostId: o.hostId ?? 'mhs-host', confidenceFloor: floor }),
      mockAgentNode({ streaming: true }),
    ],
    wrap: agentLayer,
  };
}
