import type { RunEvent, WorkflowDefinition } from '../types.js';
import { agentRefOf } from './agent-script.js';
import type { AgentRef } from './agent-script.js';

const AGENT_EVENTS: ReadonlySet<string> = new Set(['agent.reasoned', 'agent.toolCalled', 'agent.decided']);

function refFor(def: WorkflowDefinition, nodeId: string | undefined, agentId: string): AgentRef {
  const node = def.nodes.find((n) => n.id === nodeId);
  const pin = node ? agentRefOf(node) : undefined;
  return pin?.agentId === agentId ? { ...pin } : { agentId };
}

/** The run-level agent identities of {@link agentIdentities}, folded one event at a time. */
export class AgentIdentityFold {
  private readonly out: { agent?: AgentRef; runOrchestrator?: AgentRef } = {};

  constructor(private readonly def: WorkflowDefinition) {}

  apply(e: RunEvent): void {
    const agentId = e.payload.agentId;
    if (typeof agentId !== 'string') return;
    if (e.type === 'runOrchestrator.decided' && !this.out.runOrchestrator)
      this.out.runOrchestrator = refFor(this.def, e.nodeId, agentId);
    if (AGENT_EVENTS.has(e.type)) this.out.agent = refFor(this.def, e.nodeId, agentId);
  }

  value(): { agent?: AgentRef; runOrchestrator?: AgentRef } {
    return { ...this.out };
  }
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
  const f = new AgentIdentityFold(def);
  for (const e of events) f.apply(e);
  return f.value();
}
