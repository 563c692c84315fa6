// Builds governed-call contexts from the simulator families' device profiles (manifest data).
import { readFileSync } from 'node:fs';
import { H } from '../../../src/core/index.js';
import type { DeviceProfile } from '../../../src/mhs/wire-types.js';
import type { GovernedCallContext } from '../../../src/policy/call-gate.js';

/** The device profile of a bundled simulator family. */
export function familyDevice(family: 'conveyor' | 'thermostat' | 'liquid-handler' | 'laser'): DeviceProfile {
  const doc = JSON.parse(readFileSync(new URL(`../../../src/sim/devices/${family}.json`, import.meta.url), 'utf8')) as {
    device: DeviceProfile;
  };
  return doc.device;
}

/** A valid context for `capabilityId` of `family` with an open session expiring at `now + 60 s`. */
export function makeCtx(
  family: 'conveyor' | 'thermostat' | 'liquid-handler' | 'laser',
  input: Record<string, unknown>,
  now: number,
  over: Partial<GovernedCallContext> = {},
  capabilityIndex = 0,
): GovernedCallContext {
  const device = familyDevice(family);
  const binding = device.capabilities[capabilityIndex]!;
  return {
    endpointId: `mhs://test/${family}`,
    connectorId: `mhs-${family}`,
    connectorEnabled: true,
    conformanceLevel: 'CL3',
    device,
    binding,
    input,
    inputDigest: H(input),
    session: { sessionId: 'ses_01TEST', state: 'open', expiresAt: now + 60_000 },
    ...over,
  };
}
