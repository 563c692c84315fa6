/**
 * The host-side deployment policy (HOST-090): whether this deployment may drive endpoints at all
 * (`enabled`) and whether it may drive devices whose manifest mode is `hardware` (`allow_hardware`).
 * One pure rule, {@link decideDeployment}, decides; the engine applies it before any session opens.
 */
import { ErrorCode } from '../core/index.js';

/** The `deployment` section of the policy document. */
export interface DeploymentPolicy {
  enabled: boolean;
  allow_hardware: boolean;
}

/**
 * No `deployment` section at all: enabled, every other flag false (HOST-090: "a direct launch ... without a
 * document is enabled with every other flag false", core.md CORE-130).
 */
export const NO_DOCUMENT_DEPLOYMENT: DeploymentPolicy = Object.freeze({ enabled: true, allow_hardware: false });

/**
 * JSON Schema of the section. Only a JSON boolean is accepted, so a string `"true"` is a bad document
 * (`MHS.HOST.CONFIG_INVALID`), never a silent enable.
 */
export const DEPLOYMENT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: { enabled: { type: 'boolean' }, allow_hardware: { type: 'boolean' } },
} as const;

/** A validated section with the given-document defaults: a flag is on only when it is JSON `true` (HOST-090). */
export function deploymentFromSection(section: { enabled?: unknown; allow_hardware?: unknown }): DeploymentPolicy {
  return { enabled: section.enabled === true, allow_hardware: section.allow_hardware === true };
}

/**
 * What a call does to a device. `capability`, `read` and `operations` are refused for hardware devices
 * unless allowed; `safety` (status) stays available. Discovery and evidence are never asked (HOST-090).
 */
export type DeploymentAccess = 'capability' | 'read' | 'operations' | 'safety';

/** A refusal as data; null when the call may proceed. */
export interface DeploymentRefusal {
  code: ErrorCode;
  reason: 'policy_unavailable' | 'deployment_disabled' | 'hardware_disabled';
  details: Record<string, unknown>;
}

/**
 * Decides one call from the policy and the device's manifest mode. Deny by default (HOST-043): no policy
 * (`null`, unavailable) refuses with `MHS.HOST.POLICY_DENIED`; a disabled deployment refuses every access with
 * `MHS.AUTH.DISABLED`; without `allow_hardware`, a capability call, read or operations lookup on a device that is
 * not known to be `simulated` or `hybrid` refuses with `MHS.AUTH.HARDWARE_DISABLED`.
 */
export function decideDeployment(
  policy: DeploymentPolicy | null,
  access: DeploymentAccess,
  device: { device_id: string; mode?: string | undefined },
): DeploymentRefusal | null {
  const base = { device_id: device.device_id, access };
  if (!policy) return { code: ErrorCode.HOST_POLICY_DENIED, reason: 'policy_unavailable', details: base };
  if (policy.enabled !== true) return { code: ErrorCode.AUTH_DISABLED, reason: 'deployment_disabled', details: base };
  if (access === 'safety' || policy.allow_hardware === true) return null;
  // An unknown mode counts as hardware: fail closed (HOST-043, 073).
  if (device.mode === 'simulated' || device.mode === 'hybrid') return null;
  return {
    code: ErrorCode.AUTH_HARDWARE_DISABLED,
    reason: 'hardware_disabled',
    details: { ...base, mode: device.mode ?? null },
  };
}
