import { ErrorCode, HostError } from '../core/index.js';

/** Why a device gate is shut (HOST-091). */
export type GateReason = 'in_flight' | 'accepted' | 'running' | 'unknown';

/** A device gate's state: open, or shut by one unsettled command. */
export type GateState = { status: 'open' } | { status: 'shut'; commandId: string; reason: GateReason; since: number };

/**
 * The device gates of one endpoint (HOST-091): a command whose outcome is in flight, `accepted`, `running` or
 * `unknown` keeps its device's gate shut until a final receipt or a reconciliation settles it. Only effectful
 * commands acquire the gate; reads pass through.
 */
export class DeviceGates {
  private readonly shut = new Map<string, { commandId: string; reason: GateReason; since: number }>();

  constructor(private readonly endpointId: string) {}

  /** The gate of `deviceId`. */
  state(deviceId: string): GateState {
    const s = this.shut.get(deviceId);
    return s ? { status: 'shut', ...s } : { status: 'open' };
  }

  /**
   * Shuts the gate for `commandId`. Fails with `MHS.HOST.DEVICE_GATE_CLOSED` (data: endpoint_id, device_id,
   * command_id of the unsettled command, reason) when it is already shut.
   */
  acquire(deviceId: string, commandId: string, now: number, reason: GateReason = 'in_flight'): void {
    this.assertOpen(deviceId);
    this.shut.set(deviceId, { commandId, reason, since: now });
  }

  /** Fails with `MHS.HOST.DEVICE_GATE_CLOSED` when the gate is shut. */
  assertOpen(deviceId: string): void {
    const s = this.shut.get(deviceId);
    if (!s) return;
    throw new HostError(
      ErrorCode.HOST_DEVICE_GATE_CLOSED,
      `device ${deviceId} has an unsettled command ${s.commandId} (${s.reason})`,
      { endpoint_id: this.endpointId, device_id: deviceId, command_id: s.commandId, reason: s.reason },
      {
        remediation:
          s.reason === 'unknown'
            ? 'Reconcile the command (mhs-host reconcile, or engine.reconcile) before sending a new one.'
            : 'Wait for the earlier command to finish.',
      },
    );
  }

  /** Records why the gate stays shut (e.g. a `running` receipt, or an unknown outcome). */
  mark(deviceId: string, commandId: string, reason: GateReason): void {
    const s = this.shut.get(deviceId);
    if (s && s.commandId === commandId) s.reason = reason;
    else if (!s) this.shut.set(deviceId, { commandId, reason, since: 0 });
  }

  /** Reopens the gate when `commandId` is the command holding it; otherwise does nothing. */
  release(deviceId: string, commandId: string): boolean {
    const s = this.shut.get(deviceId);
    if (!s || s.commandId !== commandId) return false;
    this.shut.delete(deviceId);
    return true;
  }

  /** Every shut gate. */
  unsettled(): Array<{ deviceId: string; commandId: string; reason: GateReason }> {
    return [...this.shut].map(([deviceId, s]) => ({ deviceId, commandId: s.commandId, reason: s.reason }));
  }
}
