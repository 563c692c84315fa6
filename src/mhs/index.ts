// Anything added here is API.
export type * from './wire-types.js';
export { FINAL_STATUSES, FIXED_TOOLS, OPERATOR_TOOLS } from './wire-types.js';
export { capabilityToolName } from './tool-names.js';
export type { EndpointConnection, ToolCallResult, CallOptions } from './connection.js';
export { WIRE_SCHEMAS, MODES, RISK_CLASSES, DETERMINISM_KINDS, CONFORMANCE_LEVELS } from './wire-schemas.js';
export type { WireKind } from './wire-schemas.js';
export { checkWire, assertWire } from './validate.js';
export type { WireCheck, WireIssue, WireShapes } from './validate.js';
export { admitManifest, manifestDigest } from './manifest.js';
export type { AdmitOptions } from './manifest.js';
export { connect, MODERN_REVISION, LEGACY_REVISION } from './connector.js';
export type { ConnectOptions, MhsConnection } from './connector.js';
export { MAX_FRAME_BYTES } from './frame-guard.js';
export { SOURCE_KINDS, connectorIdFor, describeAuth, slugify, splitCommandLine } from './connector-row.js';
export type { ConnectorRow, EndpointAuth, SourceKind, SourceRef } from './connector-row.js';
export { ManifestCache, profileKeyString } from './manifest-cache.js';
export type { ProfileKey, PutResult, CachedProfile } from './manifest-cache.js';
export { presentEndpoint, renderEndpointText, SAFETY_STATEMENT, NO_CLAIM } from './presentation.js';
export type {
  EndpointPresentation,
  DevicePresentation,
  CapabilityPresentation,
  FieldPresentation,
  PresentationContext,
} from './presentation.js';
export { discoverEndpoints, defaultEndpointsFile, sourceTrust } from './discovery.js';
export type { DiscoveredEndpoint, DiscoveryOptions, DiscoveryResult } from './discovery.js';
export {
  readEnvSource,
  readFileSource,
  parseEndpointsDocument,
  fetchDescriptor,
  wellKnownUrl,
} from './discovery-sources.js';
export { connectWithReconnect, ReconnectingConnection, backoffDelay } from './reconnect.js';
export type { BackoffOptions, ReconnectEvent, ReconnectOptions } from './reconnect.js';
export { summarizeEndpoint, renderEndpointTable } from './endpoint-summary.js';
export type { EndpointSummary } from './endpoint-summary.js';
