// Guarantees (HOST-090, HOST-043): the policy file's `deployment` section is validated with the rest of the
// document; without the section the host is enabled with hardware refused, with it both flags default to false;
// only a JSON `true` enables a flag (a string "true" or a number makes the document invalid, nothing applied); and
// the one pure rule refuses a disabled deployment everything, hardware (or an unknown mode) everything but safety
// status unless allowed, and everything when the policy is unavailable.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/core/index.js';
import { NO_DOCUMENT_DEPLOYMENT, decideDeployment } from '../../src/policy/deployment-policy.js';
import type { DeploymentAccess } from '../../src/policy/deployment-policy.js';
import { DEFAULT_POLICY, deploymentOf, loadPolicyFile, parsePolicyConfig } from '../../src/policy/policy-config.js';

const ACCESS: DeploymentAccess[] = ['capability', 'read', 'operations', 'safety'];
const hw = { device_id: 'laser', mode: 'hardware' };
const sim = { device_id: 'conveyor', mode: 'simulated' };
const codeOf = (f: () => unknown): unknown => {
  try {
    f();
  } catch (e) {
    return (e as { code?: unknown }).code;
  }
  return null;
};

describe('deployment section of the policy document', () => {
  it('HOST-090: no section = enabled, hardware refused; a given section defaults both flags to false', () => {
    expect(deploymentOf(DEFAULT_POLICY)).toEqual({ enabled: true, allow_hardware: false });
    expect(deploymentOf(parsePolicyConfig({ rules: [] }))).toEqual(NO_DOCUMENT_DEPLOYMENT);
    expect(parsePolicyConfig({ deployment: {} }).deployment).toEqual({ enabled: false, allow_hardware: false });
    expect(parsePolicyConfig({ deployment: { enabled: true } }).deployment).toEqual({
      enabled: true,
      allow_hardware: false,
    });
    expect(parsePolicyConfig({ deployment: { enabled: true, allow_hardware: true } }).deployment).toEqual({
      enabled: true,
      allow_hardware: true,
    });
    expect(deploymentOf(null)).toBeNull();
  });

  it('HOST-090: only a JSON true enables: "true", 1 or unknown keys make the document invalid (CONFIG_INVALID)', () => {
    for (const bad of [
      { enabled: 'true' },
      { allow_hardware: 1 },
      { enabled: true, allow_hardware: 'yes' },
      { enabled: true, estop_devices: [] },
      [true],
      null,
    ])
      expect(
        codeOf(() => parsePolicyConfig({ deployment: bad })),
        JSON.stringify(bad),
      ).toBe(ErrorCode.HOST_CONFIG_INVALID);
  });

  it('HOST-090: a bad policy file is refused with CONFIG_INVALID; a good one carries its section', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mhs-deploy-'));
    const file = (name: string, text: string) => {
      const p = join(dir, name);
      writeFileSync(p, text);
      return p;
    };
    expect(codeOf(() => loadPolicyFile(file('string.json', '{"deployment":{"allow_hardware":"true"}}')))).toBe(
      ErrorCode.HOST_CONFIG_INVALID,
    );
    expect(codeOf(() => loadPolicyFile(file('broken.json', '{"deployment":')))).toBe(ErrorCode.HOST_CONFIG_INVALID);
    expect(loadPolicyFile(file('ok.json', '{"deployment":{"enabled":true,"allow_hardware":true}}')).deployment).toEqual(
      { enabled: true, allow_hardware: true },
    );
  });
});

describe('decideDeployment', () => {
  it('HOST-090: allow_hardware false refuses capability, read and operations on hardware; safety stays', () => {
    const p = { enabled: true, allow_hardware: false };
    for (const a of ['capability', 'read', 'operations'] as const)
      expect(decideDeployment(p, a, hw)).toMatchObject({
        code: ErrorCode.AUTH_HARDWARE_DISABLED,
        reason: 'hardware_disabled',
      });
    expect(decideDeployment(p, 'safety', hw)).toBeNull();
    for (const a of ACCESS) {
      expect(decideDeployment(p, a, sim)).toBeNull();
      expect(decideDeployment(p, a, { device_id: 'thermo', mode: 'hybrid' })).toBeNull();
    }
  });

  it('HOST-043 HOST-090: an unknown mode counts as hardware; allow_hardware true allows every mode', () => {
    const p = { enabled: true, allow_hardware: false };
    expect(decideDeployment(p, 'read', { device_id: 'x', mode: 'quantum' })?.code).toBe(
      ErrorCode.AUTH_HARDWARE_DISABLED,
    );
    expect(decideDeployment(p, 'read', { device_id: 'x' })?.code).toBe(ErrorCode.AUTH_HARDWARE_DISABLED);
    for (const a of ACCESS) expect(decideDeployment({ enabled: true, allow_hardware: true }, a, hw)).toBeNull();
  });

  it('HOST-090: a disabled deployment refuses every access with MHS.AUTH.DISABLED, hardware allowed or not', () => {
    for (const allow of [true, false])
      for (const a of ACCESS)
        for (const d of [hw, sim])
          expect(decideDeployment({ enabled: false, allow_hardware: allow }, a, d)).toMatchObject({
            code: ErrorCode.AUTH_DISABLED,
            reason: 'deployment_disabled',
          });
  });

  it('HOST-043: no policy (unavailable) refuses every access', () => {
    for (const a of ACCESS)
      expect(decideDeployment(null, a, sim)).toMatchObject({
        code: ErrorCode.HOST_POLICY_DENIED,
        reason: 'policy_unavailable',
      });
  });
});
