import { ErrorCode, HostError, toHostError } from '../core/index.js';
import type { Clock, MhsWireError } from '../core/index.js';
import type { Ledger } from '../ledger/ledger-types.js';
import type { EstopAllowList } from './estop-allow.js';
import type { OperatorEvents } from './operator-events.js';
import type { PolicyConfig } from './policy-config.js';
import type { EnablementPort, EndpointDirectory, OperatorLink } from './ports.js';

/** An operator, from token authentication (never from model text); an `agent` for the gateway's trusted stop. */
export interface OperatorPrincipal {
  id: string;
  name: string;
  /** Default `human`. `agent`: the MCP gateway's connection principal (HOST-094: the stop bypasses approval). */
  kind?: 'human' | 'agent';
}

/** Outcome of the trusted e-stop action (HOST-046). */
export type EstopOutcome =
  | { status: 'sent'; receipt: Record<string, unknown> }
  | { status: 'error'; error: MhsWireError }
  /** Hardware-only e-stop: the host shows where the physical stop is and claims nothing. */
  | { status: 'hardware_only'; physical_ref: string | null };

export interface SafetyActionsDeps {
  ledger: Ledger;
  clock: Clock;
  link: OperatorLink;
  enablement: EnablementPort;
  directory: EndpointDirectory;
  policy: PolicyConfig | (() => PolicyConfig | null | Promise<PolicyConfig | null>);
  /** The operator-managed allow-list, in addition to the policy file's `estopAllow`. */
  allowList?: EstopAllowList;
  events?: OperatorEvents;
}

/** The trusted e-stop and the operator reset. */
export interface SafetyActions {
  /**
   * One action: for software/both e-stops calls `mhs__estop` through the operator route, bypassing
   * pending approvals but not enablement or device binding (HOST-032, 046, 094), recorded as an
   * `estop.request`/`estop.receipt` pair. Raises `MHS.HOST.CONNECTOR_DISABLED`,
   * `MHS.HOST.POLICY_DENIED` (device not allow-listed) or `not_found` (device not in the manifest).
   */
  estop(endpointId: string, deviceId: string, operator: OperatorPrincipal): Promise<EstopOutcome>;
  /** Operator reset after an e-stop (never automatic, HOST-071); `reset.request`/`reset.receipt`. */
  reset(endpointId: string, deviceId: string, operator: OperatorPrincipal): Promise<EstopOutcome>;
  /** Whether the trusted e-stop may target this device under the current policy. */
  allowed(endpointId: string, deviceId: string): Promise<boolean>;
}

/** Creates the trusted e-stop and reset actions. */
export function createSafetyActions(deps: SafetyActionsDeps): SafetyActions {
  const { ledger, link, enablement, directory, events } = deps;

  async function allowed(endpointId: string, deviceId: string): Promise<boolean> {
    let cfg: PolicyConfig | null = null;
    try {
      cfg = typeof deps.policy === 'function' ? await deps.policy() : deps.policy;
    } catch {
      cfg = null;
    }
    const inPolicy = (cfg?.estopAllow ?? []).some(
      (a) => a.endpoint_id === endpointId && (a.device_id === deviceId || a.device_id === '*'),
    );
    return inPolicy || ((await deps.allowList?.isAllowed(endpointId, deviceId)) ?? false);
  }

  async function guard(endpointId: string, deviceId: string) {
    const summary = (await directory.list()).find((e) => e.endpoint_id === endpointId);
    if (!summary) {
      throw new HostError(ErrorCode.NOT_FOUND, 'no such endpoint', { endpoint_id: endpointId });
    }
    if (!(await enablement.isEnabled(summary.connector_id))) {
      throw new HostError(ErrorCode.HOST_CONNECTOR_DISABLED, 'the endpoint is not enabled', {
        endpoint_id: endpointId,
        connector_id: summary.connector_id,
      });
    }
    const device = await directory.device(endpointId, deviceId);
    if (!device) {
      throw new HostError(ErrorCode.NOT_FOUND, 'no such device on this endpoint', {
        endpoint_id: endpointId,
        device_id: deviceId,
      });
    }
    return device;
  }

  async function act(
    what: 'estop' | 'reset',
    endpointId: string,
    deviceId: string,
    operator: OperatorPrincipal,
  ): Promise<EstopOutcome> {
    const who = { kind: operator.kind ?? 'human', id: operator.id, name: operator.name };
    const base = { endpoint_id: endpointId, device_id: deviceId, operator: who };
    let device: Awaited<ReturnType<typeof guard>>;
    try {
      device = await guard(endpointId, deviceId);
      if (what === 'estop' && !(await allowed(endpointId, deviceId))) {
        throw new HostError(ErrorCode.HOST_POLICY_DENIED, 'device is not on the e-stop allow-list', {
          endpoint_id: endpointId,
          device_id: deviceId,
        });
      }
    } catch (err) {
      // Issue 20: a refused e-stop or reset is a ledger entry (who asked, for what, why nothing was sent).
      const e = toHostError(err);
      await ledger.append({
        kind: `${what}.request`,
        ...base,
        sent: false,
        refused: { code: e.code, message: e.message },
      });
      throw e;
    }
    if (what === 'estop' && device.estop?.kind === 'hardware') {
      // Nothing is sent and nothing is claimed (HOST-046).
      await ledger.append({
        kind: 'estop.request',
        ...base,
        sent: false,
        reason: 'hardware_only',
        physical_ref: device.estop.physical_ref,
      });
      const out: EstopOutcome = { status: 'hardware_only', physical_ref: device.estop.physical_ref };
      events?.emit('estop', { ...base, outcome: out });
      return out;
    }
    await ledger.append({ kind: `${what}.request`, ...base, sent: true });
    let out: EstopOutcome;
    try {
      const conn = await link.operatorConnection(endpointId);
      const res = await conn.callTool(what === 'estop' ? 'mhs__estop' : 'mhs__reset', { device_id: deviceId });
      const err = res.isError ? (res.structuredContent.error as MhsWireError | undefined) : undefined;
      if (err?.mhs_code === ErrorCode.SAFETY_HARDWARE_ESTOP_ONLY) {
        const ref = (err.details?.physical_ref as string | undefined) ?? device.estop?.physical_ref ?? null;
        out = { status: 'hardware_only', physical_ref: ref };
      } else if (res.isError) {
        out = {
          status: 'error',
          error: err ?? { mhs_code: ErrorCode.HOST_INTERNAL, message: 'no error object', remediation: '' },
        };
      } else {
        out = { status: 'sent', receipt: res.structuredContent };
      }
    } catch (e) {
      out = { status: 'error', error: toHostError(e).toWire() };
    }
    await ledger.append({ kind: `${what}.receipt`, ...base, outcome: out.status, ...outcomeFields(out) });
    events?.emit(what, { ...base, outcome: out });
    return out;
  }

  return {
    estop: (e, d, op) => act('estop', e, d, op),
    reset: (e, d, op) => act('reset', e, d, op),
    allowed,
  };
}

function outcomeFields(out: EstopOutcome): Record<string, unknown> {
  if (out.status === 'sent') return { receipt: out.receipt };
  if (out.status === 'error') return { error: out.error };
  return { physical_ref: out.physical_ref };
}
