import type { RunEvent, WorkflowDefinition } from '../types.js';
import { agentRefOf } from './agent-script.js';
import type { AgentRef } from './agent-script.js';

const AGENT_EVENTS: ReadonlySet<string> = new Set(['agent.reasoned', 'agent.toolCalled', 'agent.decided']);

function refFor(def: WorkflowDefinition, nodeId: string | undefined, agentId: string): AgentRef {
  const node = def.nodes.find((n) => n.id === nodeId);
  const pin = node ? agentRefOf(node) : undefined;
  return pin?.agentId === agentId ? { ...pin } : { agentId };
}

/**
 * The run-level agent identities of a RunSnapshot (run-snapshot.schema.json): `runOrchestrator` is the agent of
 * the first `runOrchestrator.decided` (fixed for the run's lifetime), `agent` the agent of the latest
 * `agent.*` event (it rotates as workers hand off). Each is the node's `agent` pin when it names that agent.
 */
export function agentIdentities(
  def: WorkflowDefinition,
  events: readonly RunEvent[],
): { agent?: AgentRef; runOrchestrator?: AgentRef } {
  const out: { agent?: AgentRef; runOrchestrator?: AgentRef } = {};
  for (const e of events) {
    const agentId = e.payload.agentId;
    if (typeof agentId !== 'string') continue;
    if (e.type === 'runOrchestrator.decided' && !out.runOrchestrator)
      out.runOrchestrator = refFor(def, e.nodeId, agentId);
    if (AGENT_EVENTS.has(e.type)) out.agent = refFor(def, e.nodeId, agentId);
  }
  return out;
}
