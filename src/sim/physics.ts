/**
 * Interprets a family's declarative physics model (family.ts): how long a capability takes, which
 * state it changes, which bounds it must respect (a violation is `MHS.LIMIT.RANGE`, wire contract §4),
 * its effects and its output. Pure: state in, plan out; randomness is passed in (seeded).
 */
import { ErrorCode, HostError } from '../core/index.js';
import type { Effect } from '../mhs/wire-types.js';
import type { CapabilityModel, DeviceModel } from './family.js';

export type DeviceState = Record<string, number | boolean | string>;

/** What executing a capability would do; nothing is applied until the executor commits `next`. */
export interface ExecutionPlan {
  durationMs: number;
  next: DeviceState;
  effects: Effect[];
  output: Record<string, unknown>;
}

/** Initial state of a device model. */
export function initialState(model: DeviceModel): DeviceState {
  return Object.fromEntries(Object.entries(model.state).map(([k, v]) => [k, v.initial]));
}

function num(v: unknown): number {
  return typeof v === 'number' ? v : 0;
}

function round(v: number): number {
  return Math.round(v * 1e6) / 1e6;
}

/** Wall-clock duration of a capability call, before any time scale. */
export function plannedDuration(m: CapabilityModel, input: Record<string, unknown>, state: DeviceState): number {
  const d = m.duration;
  if (!d) return 0;
  if (d.kind === 'fixed') return d.ms;
  if (d.kind === 'per_unit') return (d.base_ms ?? 0) + num(input[d.input]) * d.ms_per_unit;
  const distance = Math.abs(num(input[d.input]) - num(state[d.var]));
  return (d.base_ms ?? 0) + (distance / d.units_per_s) * 1000;
}

/**
 * Plans one execution. Throws `HostError(MHS.LIMIT.RANGE)` with `details {var, value, min?, max?}`
 * when an update would leave its bounds; the caller turns that into a rejected receipt.
 */
export function planExecution(
  model: DeviceModel,
  capabilityId: string,
  input: Record<string, unknown>,
  state: DeviceState,
  random: () => number,
): ExecutionPlan {
  const m = model.capabilities[capabilityId];
  if (!m) throw new HostError(ErrorCode.SCHEMA_INVALID_INPUT, `no model for ${capabilityId}`, { capabilityId });
  const next: DeviceState = { ...state };
  for (const u of m.updates ?? []) {
    const delta = (u.input !== undefined ? num(input[u.input]) : 0) * (u.factor ?? 1) + (u.value ?? 0);
    const noise = u.noise ? (random() * 2 - 1) * u.noise : 0;
    const current = num(next[u.var]);
    const value = round((u.op === 'set' ? delta : u.op === 'add' ? current + delta : current - delta) + noise);
    const min = u.min_var !== undefined ? num(next[u.min_var]) : u.min;
    const max = u.max_var !== undefined ? num(next[u.max_var]) : u.max;
    if ((min !== undefined && value < min) || (max !== undefined && value > max)) {
      throw new HostError(
        ErrorCode.LIMIT_RANGE,
        `${u.var} would become ${value}, outside [${min ?? '-inf'}, ${max ?? 'inf'}]`,
        { var: u.var, value, ...(min !== undefined ? { min } : {}), ...(max !== undefined ? { max } : {}) },
        { remediation: 'choose an input that keeps the device within its limits' },
      );
    }
    next[u.var] = value;
  }
  const effects: Effect[] = (m.effects ?? []).map((e) => {
    const eff: Effect = { resource: e.resource, kind: e.kind };
    if (e.input !== undefined)
      eff.quantity = { value: round(num(input[e.input]) * (e.factor ?? 1)), unit: e.unit ?? '' };
    return eff;
  });
  const output = Object.fromEntries(Object.entries(m.output ?? {}).map(([k, v]) => [k, next[v]]));
  return { durationMs: plannedDuration(m, input, state), next, effects, output };
}

/** State variables of one resource (all when `resource` is undefined). */
export function stateOfResource(model: DeviceModel, state: DeviceState, resource?: string): DeviceState {
  if (resource === undefined) return { ...state };
  return Object.fromEntries(Object.entries(state).filter(([k]) => model.state[k]?.resource === resource));
}
