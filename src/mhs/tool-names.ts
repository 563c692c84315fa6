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

/** Prefix of every tool of the MHS projection (wire contract §4): fixed tools, `mhs__session`, capability tools. */
export const MHS_TOOL_PREFIX = 'mhs__';

/** The MCP resource an MHS endpoint serves its manifest as (wire contract §3). */
export const MHS_MANIFEST_URI = 'mhs://manifest';

/** True for a tool name in the MHS projection's reserved `mhs__` family (wire contract §4). */
export function isMhsToolName(name: string): boolean {
  return name.startsWith(MHS_TOOL_PREFIX);
}
