import { sha256Hex } from '../core/index.js';

/**
 * Tool name of a capability binding (wire contract §4): `mhs__cap__<device_id>__<capability_id>`,
 * characters outside `[A-Za-z0-9_-]` replaced by `_`, cut to 64 characters with a 6-hex hash suffix.
 */
export function capabilityToolName(deviceId: string, capabilityId: string): string {
  const raw = `mhs__cap__${deviceId}__${capabilityId}`.replace(/[^A-Za-z0-9_-]/g, '_');
  if (raw.length <= 64) return raw;
  return `${raw.slice(0, 57)}_${sha256Hex(raw).slice(0, 6)}`;
}
