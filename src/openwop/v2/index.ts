// Anything added here is API.
// The OpenWOP major-2 wire projection of the one engine: pure mapping, no I/O beyond reading vendored data files.
export {
  V2_TENANT,
  bindRunId,
  runIdFromParam,
  runPathSegment,
  projectPathSegment,
  unprojectPathSegment,
} from './ids.js';
export { v2TypeOf, isV2Type } from './codemap.js';
export { projectEvent, V2_TERMINAL_TYPES } from './event-projection.js';
export type { V2RunEvent } from './event-projection.js';
export { projectSnapshot, SNAPSHOT_EXTENSION } from './snapshot-projection.js';
export { ownerOf, API_KEY_ISSUER } from './owner.js';
export type { V2Owner, V2Subject } from './owner.js';
export { toCreateRunRequest, UNSUPPORTED_CREATE_FIELDS } from './create-request.js';
export { toForkRequest } from './fork-request.js';
export { negotiate, classifyPath, PROTOCOL_VERSIONS, PREFERRED_VERSION, VERSION_OF } from './negotiation.js';
export type { Major, Negotiated, PathKind } from './negotiation.js';
export { toV2Error, v2StatusOf } from './wire-errors.js';
export type { V2ErrorEnvelope } from './wire-errors.js';
export { v2DiscoveryRoot, RUN_LIST_MAX_PAGE, SEAMS_PROFILE_ID } from './discovery.js';
export { manifestOperations, manifestOperation, manifestSegments, manifestHostPaths } from './path-manifest.js';
export { effectSeamManifest, EFFECT_SEAMS } from './effect-seams.js';
export type { EffectSeam, HostBuild } from './effect-seams.js';
export type { ManifestOperation } from './path-manifest.js';
export { diffRuns } from './run-diff.js';
export { projectWorkflow } from './workflow-projection.js';
export type { DiffSide, EventDiff, RunDiff } from './run-diff.js';
export { bindEffectId, projectRunEffects } from './effect-projection.js';
export { parseEffectRetry, parseFireEffectSeam } from './effect-seam-requests.js';
export type { EffectRetryBody, FireEffectSeamBody } from './effect-seam-requests.js';
export type { V2EffectRecord } from './effect-projection.js';
