// Anything added here is API.
export { createEngine } from './engine.js';
export type { Engine, EngineOptions, StartReport } from './engine.js';
export type { InvokeRequest, InvokeResult, PendingCommand } from './call-types.js';
export type { TaskSpec, TaskStep, TaskResult, StepResult, TaskProgress } from './task-runner.js';
export type { ReconcileResult } from './reconcile.js';
export { EndpointActor } from './endpoint-actor.js';
export { collectEndpointEvidence, recordDisclosure } from './endpoint-evidence.js';
export { SessionDisclosures, disclosureOf, sessionDisclosureText } from './session-disclosure.js';
export type { DisclosureRequest, SessionDisclosure } from './session-disclosure.js';
export type { CollectedEvidence, EngineArtifacts, TaskEvidence } from './endpoint-evidence.js';
export type { EngineEndpoint, EndpointStatus } from './endpoint-actor.js';
export { CommandLane } from './command-lane.js';
export type { CommandLaneOptions, LaneStats } from './command-lane.js';
export { DeviceGates } from './device-gate.js';
export type { GateReason, GateState } from './device-gate.js';
export { defaultCallGate } from './default-gate.js';
export { stripControl } from './governed-call.js';
export { traceIdOf } from './tracing.js';
export type { ConnectionDrop, ReconnectedEvent } from './endpoint-actor.js';
export { openSessionStore } from './session-store.js';
export type { SessionSnapshotStore, PersistedSession } from './session-store.js';
export { openRecoveryMarkStore } from './recovery-mark.js';
export type { RecoveryMarkStore } from './recovery-mark.js';
export { ToolSurfaceBuilder, capabilityTools, surfaceDrift, MODEL_FIXED_TOOLS } from './tool-surface.js';
export type { ModelTool, ToolSurface, ToolAnnotations } from './tool-surface.js';
export { dispatchToolCall } from './tool-dispatch.js';
export type { ModelToolCall, ToolDispatchDeps, DispatchedCall } from './tool-dispatch.js';
export { openHostRuntime } from './host-runtime.js';
export type { HostRuntime, HostRuntimeOptions } from './host-runtime.js';
export { openOperatorRuntime } from './operator-runtime.js';
export type { OperatorRuntime, PolicySource } from './operator-runtime.js';
export { derivePlan, sealPlan, planCommands, REPLAY_PLAN_FORMAT } from './replay-plan.js';
export type {
  ReplayPlan,
  ReplayCommand,
  ReplayTask,
  ReplayEndpoint,
  ExpectedReceipt,
  NotReplayable,
} from './replay-plan.js';
export {
  readPackage,
  planFromPackage,
  planFromStore,
  loadPlan,
  readPlanFile,
  planProblems,
  checkPlan,
  replayBundle,
} from './replay-source.js';
export { runReplay, replayRuntimeOptions } from './replay-run.js';
export type { ReplayReport, Divergence } from './replay-run.js';
