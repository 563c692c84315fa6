/**
 * Applies the deployment policy (HOST-090) on the engine's paths to a device: the governed call (before the
 * session is acquired and the intent journaled), `mhs__read`, `mhs__operations` and reconciliation, and
 * `mhs__safety` (refused only while the deployment is disabled). {@link decideDeployment} decides; this records a
 * refusal in the ledger like every policy refusal (HOST-045) and throws it.
 */
import { ErrorCode, HostError, isoAt, toHostError } from '../core/index.js';
import type { Clock } from '../core/index.js';
import type { Ledger } from '../ledger/ledger-types.js';
import type { DeviceProfile } from '../mhs/wire-types.js';
import { decideDeployment } from '../policy/deployment-policy.js';
import type { DeploymentAccess, DeploymentPolicy, DeploymentRefusal } from '../policy/deployment-policy.js';

/** A fixed deployment policy, or a function read on every decision (null/throw: unavailable, refuse; HOST-043). */
export type DeploymentSource = DeploymentPolicy | (() => DeploymentPolicy | null | Promise<DeploymentPolicy | null>);

/** The device a call is about, on one endpoint. */
export interface DeploymentTarget {
  endpointId: string;
  connectorId: string;
  device: DeviceProfile;
}

/**
 * Admits one access to a device or throws the refusal. `scope` (capability, input digest, run, node, ...) is
 * written on the refusal entry and in the error's details.
 */
export type DeploymentAdmit = (
  target: DeploymentTarget,
  access: DeploymentAccess,
  scope?: Record<string, unknown>,
) => Promise<void>;

const REMEDIATION: Record<DeploymentRefusal['reason'], string> = {
  policy_unavailable: 'The host policy could not be read; nothing is sent until it can (deny by default).',
  deployment_disabled:
    'This deployment is disabled: an operator sets "deployment": {"enabled": true} in the policy file.',
  hardware_disabled:
    'Hardware devices are not allowed in this deployment: an operator sets "deployment": {"enabled": true, ' +
    '"allow_hardware": true} in the policy file. Discovery, safety status and the operator e-stop stay available.',
};

/** Creates the guard every endpoint actor of one engine shares. */
export function createDeploymentGuard(deps: {
  ledger: Ledger;
  clock: Clock;
  source: DeploymentSource;
}): DeploymentAdmit {
  const load = async (): Promise<DeploymentPolicy | null> => {
    try {
      return typeof deps.source === 'function' ? await deps.source() : deps.source;
    } catch {
      return null;
    }
  };
  return async (target, access, scope = {}) => {
    const refusal = decideDeployment(await load(), access, target.device);
    if (!refusal) return;
    const where = { endpoint_id: target.endpointId, device_id: target.device.device_id, ...scope };
    let ledgerError: Record<string, unknown> = {};
    try {
      await deps.ledger.append({
        kind: 'approval',
        event: 'refused',
        ...where,
        connector_id: target.connectorId,
        access,
        decision: 'deny',
        method: 'policy_rule',
        principals: [{ kind: 'system', id: 'policy:deployment' }],
        decided_at: isoAt(deps.clock.now()),
        reason: refusal.reason,
        code: refusal.code,
      });
    } catch (err) {
      // The refusal stands either way; a record that could not be written is reported with it (HOST-093).
      ledgerError = { ledger_error: toHostError(err, ErrorCode.HOST_LEDGER_UNAVAILABLE).toWire() };
    }
    throw new HostError(
      refusal.code,
      `refused by the deployment policy: ${refusal.reason} (${access} on ${target.device.device_id})`,
      { ...where, reason: refusal.reason, ...refusal.details, ...ledgerError },
      { remediation: REMEDIATION[refusal.reason] },
    );
  };
}
