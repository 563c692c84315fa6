// Anything added here is API.
export { createOpenwopHost, CORE_NODES } from './host.js';
export type { OpenwopHost, OpenwopHostOptions } from './host.js';
export { RunManager } from './run-manager.js';
export type { RunManagerOptions } from './run-manager.js';
export { RunActor } from './run-actor.js';
export type { RunActorDeps } from './run-actor.js';
export { OpenwopStore, ENGINE_VERSION, EVENT_LOG_SCHEMA_VERSION } from './store.js';
export type { NewRun, RunPatch, StoredRun } from './store.js';
export { ensureOpenwopTables } from './store-schema.js';
export { NodeRegistry, NodeFailure, RunCancelled } from './node-registry.js';
export type {
  Caller,
  ChildRuns,
  InterruptOutcome,
  InterruptRequest,
  NodeContext,
  NodeModule,
  NodeResult,
} from './node-registry.js';
export { WorkflowCatalog, validateWorkflow, checkRunnable } from './workflows.js';
export { baseCapabilities, fixtureRunnable, runnableFixtures } from './capabilities.js';
export { bindServices, mergeCapabilities } from './service-family.js';
export type { NodeServices, ServiceFamily, ServiceName } from './service-family.js';
export type { HostLimits } from './capabilities.js';
export { openwopSchemas, openwopDir, schemaId, REPO_ROOT } from './schemas.js';
export type { OpenwopSchemas, SchemaIssue } from './schemas.js';
export { buildSnapshot } from './snapshot.js';
export type { RunSnapshot } from './snapshot.js';
export { agentsFamily, agentLayer } from './agents/agents-family.js';
export type { AgentsFamilyOptions } from './agents/agents-family.js';
export { emitOnce } from './agents/emit-once.js';
export { agentRefOf, resolveAgentId, runAgentScript, scriptFromConfig } from './agents/agent-script.js';
export type { AgentRef, AgentScript, AgentScriptResult } from './agents/agent-script.js';
export {
  DEFAULT_ESCALATION_THRESHOLD,
  SPEC_CONFIDENCE_FLOOR,
  belowThreshold,
  escalationThreshold,
  lowConfidenceGate,
} from './agents/confidence.js';
export {
  dispatchWorkers,
  dispatchMappings,
  effectiveMappings,
  harvest,
  CHAIN_EVENT,
} from './agents/dispatch-workers.js';
export type { DispatchMappings, WorkerOutcome } from './agents/dispatch-workers.js';
export { runDispatchTurn } from './agents/dispatch-turn.js';
export type { OrchestratorDecision } from './agents/dispatch-turn.js';
export { supervisorNode, dispatchNode, mockAgentNode, supervisorPlan } from './nodes/orchestrator-nodes.js';
export { Graph } from './graph.js';
export type { GraphState, NodeState, NodeStatus, Decision } from './graph.js';
export { mhsNodes, mhsInvokeNode, mhsTaskNode } from './nodes/mhs-nodes.js';
export type { MhsNodeDeps } from './nodes/mhs-nodes.js';
export type { MhsApprovals } from './nodes/mhs-approvals.js';
export { createMcpFamily, mcpSurface } from './services/mcp-family.js';
export type { McpFamily, McpFamilyOptions } from './services/mcp-family.js';
export { loadMcpServersConfig, parseMcpServersConfig } from './services/mcp-servers-config.js';
export type { McpServersConfig, McpServerEntry } from './services/mcp-servers-config.js';
export { mcpWireError } from './services/mcp-connections.js';
export type { McpSurface, McpServerHealth } from './services/mcp-surface.js';
export { executeMcpToolCall, mcpCallPromptNode, mcpClientConformanceNode } from './nodes/mcp-nodes.js';
export { TERMINAL_STATUSES, TERMINAL_EVENT_TYPES } from './types.js';
export type {
  CreateRunRequest,
  RunError,
  RunEvent,
  RunEventInput,
  RunRecord,
  RunStatus,
  WorkflowDefinition,
  WorkflowEdge,
  WorkflowNode,
} from './types.js';
export { causationFamily, loadPeers } from './causation/causation-family.js';
export { remoteRunNode } from './causation/remote-run-node.js';
export type { Peer, RemoteRunDeps } from './causation/remote-run-node.js';
export { checkHostId, resolveHostId } from './causation/host-id.js';
export {
  ANCESTRY_CAUSES,
  causationOf,
  checkInboundCausation,
  validTraceparent,
  causationIdOf,
  causationHostIdOf,
} from './causation/causation-link.js';
export type { AncestryCause, CausationLink } from './causation/causation-link.js';
