import type { EndpointConnection } from '../mhs/connection.js';
import type { DeviceProfile } from '../mhs/wire-types.js';

/**
 * The operator route to an endpoint (HOST-047, 090; CORE-130): a connection to the endpoint's
 * projection started with `--operator-tools`, separate from the agent's connection, so that
 * `mhs__permit` and `mhs__reset` are never reachable by the model.
 */
export interface OperatorLink {
  operatorConnection(endpointId: string): Promise<EndpointConnection>;
}

/**
 * Connector enablement as the operator surface needs it (HOST-066…069), keyed by connector id.
 * `createEnablement` (enablement.ts) satisfies it; it records `operator.enable|disable` itself.
 */
export interface EnablementPort {
  isEnabled(connectorId: string): Promise<boolean>;
  enable(connectorId: string, operator: { id: string; via?: string }): Promise<unknown>;
  disable(connectorId: string, operator: { id: string; via?: string }): Promise<unknown>;
}

/** An endpoint as the operator console lists it, from the host's own records (never model text). */
export interface EndpointSummary {
  endpoint_id: string;
  connector_id: string;
  display_name: string;
  enabled: boolean;
  /** MHS is an experimental integration (HOST-067). */
  experimental: true;
  transport?: string;
  conformance?: string | null;
  trust?: string | null;
  devices: DeviceProfile[];
}

/** Where the operator surface finds endpoints and device profiles (discovery/manifest cache). */
export interface EndpointDirectory {
  list(): Promise<EndpointSummary[]>;
  device(endpointId: string, deviceId: string): Promise<DeviceProfile | undefined>;
}
