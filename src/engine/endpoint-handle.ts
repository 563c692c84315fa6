import { ErrorCode, HostError } from '../core/index.js';
import type { Db } from '../ledger/index.js';
import type { CallOptions, ToolCallResult } from '../mhs/connection.js';
import type { CapabilityBinding, DeviceProfile, Manifest } from '../mhs/wire-types.js';
import type { DeploymentAccess } from '../policy/deployment-policy.js';
import type { DeploymentAdmit } from './deployment-guard.js';
import type { ForwardedOpOther } from './endpoint-requests.js';

/**
 * An endpoint as callers that do not send commands see it (tasks, model tool surfaces, reads, evidence): its admitted
 * manifest, the deployment admission, tool calls on its connection and the end of a session scope. An attached
 * {@link EndpointActor} is one; on a shared PostgreSQL store an endpoint another live process attaches is a
 * {@link RemoteEndpoint} (issue 19), whose tool calls go through that process.
 */
export interface EndpointHandle {
  readonly endpointId: string;
  readonly connectorId: string;
  readonly manifest: Manifest;
  resolve(deviceId: string, capabilityId: string): { device: DeviceProfile; binding: CapabilityBinding };
  admit(access: DeploymentAccess, deviceId: string, scope?: Record<string, unknown>): Promise<void>;
  callTool(name: string, args: Record<string, unknown>, opts?: CallOptions): Promise<ToolCallResult>;
  closeSessionScope(scope: string): Promise<void>;
  /**
   * The endpoint-lease fence of what this process records about the endpoint (issue 19): an attached, leased actor's;
   * none for a {@link RemoteEndpoint} (its holder answered the read; the store is the one both share).
   */
  readonly fence?: ((t: Db) => Promise<void>) | undefined;
}

/** An endpoint attached by another live host process: its connector and the manifest it admitted (from the store). */
export interface RemoteEndpointInfo {
  connectorId: string;
  endpointId: string;
  manifest: Manifest;
}

/** How a {@link RemoteEndpoint} reaches its holder (the engine's forwarding, then a local retry on takeover). */
export interface RemoteEndpointDeps {
  admit: DeploymentAdmit;
  callTool(
    info: RemoteEndpointInfo,
    name: string,
    args: Record<string, unknown>,
    opts?: CallOptions,
  ): Promise<ToolCallResult>;
  closeSessionScope(info: RemoteEndpointInfo, scope: string): Promise<void>;
}

/** The device and binding of `manifest`, or `MHS.SCHEMA.INVALID_INPUT` (wire contract §4), as an actor resolves them. */
export function resolveBinding(
  manifest: Manifest,
  deviceId: string,
  capabilityId: string,
): { device: DeviceProfile; binding: CapabilityBinding } {
  const device = manifest.devices.find((d) => d.device_id === deviceId);
  const binding = device?.capabilities.find((c) => c.capability_id === capabilityId);
  if (!device || !binding)
    throw new HostError(
      ErrorCode.SCHEMA_INVALID_INPUT,
      device
        ? `device ${deviceId} has no capability ${capabilityId}`
        : `endpoint ${manifest.endpoint_id} has no device ${deviceId}`,
      { endpoint_id: manifest.endpoint_id, device_id: deviceId, capability_id: capabilityId },
      { remediation: 'Pick a device and capability from the manifest (mhs__inspect).' },
    );
  return { device, binding };
}

/**
 * An endpoint another live process holds the lease of (issue 19): resolved and admitted here against the manifest
 * its holder admitted, with the same deployment policy (HOST-090); its tool calls and session closes are forwarded to
 * the holder. Governed calls never go through it: `engine.invoke` forwards those with their fences.
 */
export class RemoteEndpoint implements EndpointHandle {
  constructor(
    readonly info: RemoteEndpointInfo,
    private readonly deps: RemoteEndpointDeps,
  ) {}

  get endpointId(): string {
    return this.info.endpointId;
  }

  get connectorId(): string {
    return this.info.connectorId;
  }

  get manifest(): Manifest {
    return this.info.manifest;
  }

  resolve(deviceId: string, capabilityId: string): { device: DeviceProfile; binding: CapabilityBinding } {
    return resolveBinding(this.info.manifest, deviceId, capabilityId);
  }

  async admit(access: DeploymentAccess, deviceId: string, scope: Record<string, unknown> = {}): Promise<void> {
    const device = this.info.manifest.devices.find((d) => d.device_id === deviceId);
    if (!device)
      throw new HostError(
        ErrorCode.SCHEMA_INVALID_INPUT,
        `endpoint ${this.endpointId} has no device ${deviceId}`,
        { endpoint_id: this.endpointId, device_id: deviceId },
        { remediation: 'Pick a device from the manifest (mhs__devices).' },
      );
    return this.deps.admit({ endpointId: this.endpointId, connectorId: this.connectorId, device }, access, scope);
  }

  callTool(name: string, args: Record<string, unknown>, opts?: CallOptions): Promise<ToolCallResult> {
    return this.deps.callTool(this.info, name, args, opts);
  }

  closeSessionScope(scope: string): Promise<void> {
    return this.deps.closeSessionScope(this.info, scope);
  }
}

/** Where the engine finds the endpoints other live processes attach, and how an operation reaches their holder. */
export interface RemoteEndpoints {
  list(): Promise<RemoteEndpointInfo[]>;
  /**
   * Forwards the operation and returns the holder's result (a tool call's `ToolCallResult`, null for a session close,
   * a reconciliation's `ReconcileResult[]`); undefined when this process took the endpoint over meanwhile (make it
   * here).
   */
  send(info: RemoteEndpointInfo, op: ForwardedOpOther, waitMs: number): Promise<unknown>;
}

/**
 * The handles of the endpoints other processes attach (none attached here, `attached`): their tool calls and session
 * closes forwarded, or made on `local` (the endpoint attached here) once this process took the endpoint over.
 */
export function remoteEndpoints(
  remote: RemoteEndpoints,
  admit: DeploymentAdmit,
  local: (endpointId: string) => Promise<EndpointHandle>,
  attached: (endpointId: string) => boolean,
): () => Promise<RemoteEndpoint[]> {
  const deps: RemoteEndpointDeps = {
    admit,
    callTool: async (info, name, args, opts) => {
      const op = {
        kind: 'tool' as const,
        name,
        args,
        ...(opts?.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
        ...(opts?.meta ? { meta: opts.meta } : {}),
      };
      const r = (await remote.send(info, op, opts?.timeoutMs ?? 10_000)) as ToolCallResult | undefined;
      return r ?? (await local(info.endpointId)).callTool(name, args, opts);
    },
    closeSessionScope: async (info, scope) => {
      const r = await remote.send(info, { kind: 'closeScope', scope }, 10_000);
      if (r === undefined) await (await local(info.endpointId)).closeSessionScope(scope);
    },
  };
  return async () =>
    (await remote.list()).filter((i) => !attached(i.endpointId)).map((i) => new RemoteEndpoint(i, deps));
}
