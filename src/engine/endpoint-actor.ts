import { BehaviorSubject } from 'rxjs';
import { ErrorCode, HostError } from '../core/index.js';
import type { Clock } from '../core/index.js';
import type { EndpointConnection } from '../mhs/connection.js';
import type { CapabilityBinding, DeviceProfile, Manifest, Principal } from '../mhs/wire-types.js';
import type { Ledger } from '../ledger/ledger-types.js';
import { CommandLane } from './command-lane.js';
import { DeviceGates } from './device-gate.js';
import { SessionPool } from './session-pool.js';

/** A connected, admitted endpoint as the engine takes it (the MCP connector's `MhsConnection` fits). */
export interface EngineEndpoint extends EndpointConnection {
  readonly connectorId: string;
  readonly manifest: Manifest;
}

/** Lifecycle of an endpoint actor. */
export type EndpointStatus = 'connected' | 'disconnected' | 'stopped';

/** Options of an {@link EndpointActor}. */
export interface EndpointActorOptions {
  clock: Clock;
  ledger: Ledger;
  principal: Principal;
  sessionTtlMs: number;
  sessionCallTimeoutMs: number;
  adhocIdleMs: number;
  laneMaxPending: number;
  onBackgroundError?: (err: HostError) => void;
}

/**
 * One actor per enabled endpoint (HOST-080, 082): it owns the connection, the sessions, the device gates and
 * the bounded command lane of that endpoint, and shares none of them with another endpoint.
 */
export class EndpointActor {
  readonly endpointId: string;
  readonly connectorId: string;
  readonly conn: EngineEndpoint;
  readonly lane: CommandLane;
  readonly gates: DeviceGates;
  readonly sessions: SessionPool;
  readonly status$ = new BehaviorSubject<EndpointStatus>('connected');
  private readonly devices = new Map<string, { device: DeviceProfile; bindings: Map<string, CapabilityBinding> }>();

  constructor(conn: EngineEndpoint, o: EndpointActorOptions) {
    this.conn = conn;
    this.endpointId = conn.manifest.endpoint_id;
    this.connectorId = conn.connectorId;
    this.lane = new CommandLane({ endpointId: this.endpointId, maxPending: o.laneMaxPending });
    this.gates = new DeviceGates(this.endpointId);
    this.sessions = new SessionPool({
      endpointId: this.endpointId,
      conn,
      clock: o.clock,
      ledger: o.ledger,
      principal: o.principal,
      ttlMs: o.sessionTtlMs,
      callTimeoutMs: o.sessionCallTimeoutMs,
      adhocIdleMs: o.adhocIdleMs,
      ...(o.onBackgroundError ? { onBackgroundError: o.onBackgroundError } : {}),
    });
    this.index(conn.manifest);
    void conn.closed.then(() => {
      if (this.status$.value === 'connected') this.status$.next('disconnected');
    });
  }

  private index(m: Manifest): void {
    this.devices.clear();
    for (const d of m.devices)
      this.devices.set(d.device_id, { device: d, bindings: new Map(d.capabilities.map((c) => [c.capability_id, c])) });
  }

  get manifest(): Manifest {
    return this.conn.manifest;
  }

  /**
   * The device profile and capability binding from the admitted manifest.
   * @throws HostError `MHS.SCHEMA.INVALID_INPUT` for an unknown device or capability (wire contract §4).
   */
  resolve(deviceId: string, capabilityId: string): { device: DeviceProfile; binding: CapabilityBinding } {
    const d = this.devices.get(deviceId);
    const binding = d?.bindings.get(capabilityId);
    if (!d || !binding)
      throw new HostError(
        ErrorCode.SCHEMA_INVALID_INPUT,
        d
          ? `device ${deviceId} has no capability ${capabilityId}`
          : `endpoint ${this.endpointId} has no device ${deviceId}`,
        { endpoint_id: this.endpointId, device_id: deviceId, capability_id: capabilityId },
        { remediation: 'Pick a device and capability from the manifest (mhs__inspect).' },
      );
    return { device: d.device, binding };
  }

  /** Device profiles of the manifest. */
  deviceProfiles(): DeviceProfile[] {
    return [...this.devices.values()].map((d) => d.device);
  }

  /** Stops the actor: closes sessions, the lane and the connection. */
  async stop(opts: { closeConnection?: boolean } = {}): Promise<void> {
    if (this.status$.value === 'stopped') return;
    this.lane.close();
    if (this.status$.value === 'connected') await this.sessions.closeAll().catch(() => undefined);
    this.status$.next('stopped');
    this.status$.complete();
    if (opts.closeConnection !== false) await this.conn.close().catch(() => undefined);
  }
}
