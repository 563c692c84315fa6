/** HOST-090 projection policy document (`--config FILE`, wire contract §4). */
import { readFileSync } from 'node:fs';
import { ErrorCode, HostError } from '../core/index.js';
import type { ProjectionPolicy } from './sim-options.js';

/**
 * Reads a policy document. Only a JSON `true` enables a flag (defaults false); `estop_devices`
 * is kept when it is an array of strings. Throws `MHS.HOST.CONFIG_INVALID` when the file is not
 * a JSON object.
 */
export function loadPolicy(file: string): ProjectionPolicy {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new HostError(ErrorCode.HOST_CONFIG_INVALID, `cannot read policy ${file}`, { file }, { cause: err });
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new HostError(ErrorCode.HOST_CONFIG_INVALID, `policy ${file} is not a JSON object`, { file });
  }
  const doc = raw as Record<string, unknown>;
  const list = doc['estop_devices'];
  return {
    enabled: doc['enabled'] === true,
    allow_hardware: doc['allow_hardware'] === true,
    estop_devices: Array.isArray(list) && list.every((x) => typeof x === 'string') ? (list as string[]) : null,
  };
}
