// Anything added here is API.
export { createEngine } from './engine.js';
export type { Engine, EngineOptions, StartReport } from './engine.js';
export type { InvokeRequest, InvokeResult, PendingCommand } from './call-types.js';
export type { TaskSpec, TaskStep, TaskResult, StepResult, TaskProgress } from './task-runner.js';
export type { ReconcileResult } from './reconcile.js';
export { EndpointActor } from './endpoint-actor.js';
export { collectEndpointEvidence, recordDisclosure } from './endpoint-evidence.js';
export type { CollectedEvidence, EngineArtifacts } from './endpoint-evidence.js';
export type { EngineEndpoint, EndpointStatus } from './endpoint-actor.js';
export { CommandLane } from './command-lane.js';
export type { CommandLaneOptions, LaneStats } from './command-lane.js';
export { DeviceGates } from './device-gate.js';
export type { GateReason, GateState } from './device-gate.js';
export { defaultCallGate } from './default-gate.js';
export { stripControl } from './governed-call.js';
export { traceIdOf } from './tracing.js';
