/**
 * A device family is pure data: a wire-contract DeviceProfile (§3) plus a small declarative physics
 * model. The server never names a family; adding one is adding a JSON file (issue 2 item 4).
 */
import { readFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ValidateFunction } from 'ajv';
import type * as Ajv2020Module from 'ajv/dist/2020.js';
import { ErrorCode, HostError } from '../core/index.js';
import type { DeviceProfile } from '../mhs/wire-types.js';
import { BUILTIN_FAMILIES } from './builtin.js';
import { FAMILY_SCHEMA } from './family-schema.js';

/** Wall-clock duration of one execution. `approach` moves `var` toward `input` at `units_per_s`. */
export type DurationModel =
  | { kind: 'fixed'; ms: number }
  | { kind: 'per_unit'; input: string; ms_per_unit: number; base_ms?: number }
  | { kind: 'approach'; var: string; input: string; units_per_s: number; base_ms?: number };

/** One state update: `var = (set ? 0 : var) ± (input * factor + value) (+ seeded noise)`, then bounds. */
export interface UpdateModel {
  var: string;
  op: 'set' | 'add' | 'sub';
  input?: string;
  value?: number;
  factor?: number;
  /** Half-width of uniform seeded noise added to the result (deterministic under `--seed`). */
  noise?: number;
  min?: number;
  max?: number;
  /** Bounds read from other state variables (e.g. the tip capacity). */
  min_var?: string;
  max_var?: string;
}

export interface EffectModel {
  resource: string;
  kind: string;
  input?: string;
  factor?: number;
  unit?: string;
}

/** Behaviour of one capability; keyed by `capability_id` in {@link DeviceModel.capabilities}. */
export interface CapabilityModel {
  duration?: DurationModel;
  updates?: UpdateModel[];
  effects?: EffectModel[];
  /** Output field name → state variable read after the updates. */
  output?: Record<string, string>;
  /** Interlocks that must be `closed` to execute (default: every interlock of the device). */
  interlocks?: string[];
}

export interface StateVar {
  initial: number | boolean | string;
  /** Device resource the variable belongs to (filters `mhs__read {resource}`). */
  resource?: string;
}

export interface DeviceModel {
  state: Record<string, StateVar>;
  capabilities: Record<string, CapabilityModel>;
}

/** A family file: `src/sim/devices/<family>.json` or any file given with `--device`. */
export interface FamilyDefinition {
  family: string;
  /** Endpoint display name when this family is served alone. */
  endpoint_display_name: string;
  device: DeviceProfile;
  model: DeviceModel;
}

/** Options of the family validator, here and when `npm run build` precompiles it (src/build/family-validator.ts). */
export const FAMILY_AJV_OPTIONS = { allErrors: true, strict: false } as const;
/** Where the compiled tree holds the precompiled validator (ajv standalone code, CommonJS), next to this module. */
export const PRECOMPILED_FAMILY_VALIDATOR = 'family-validator.cjs';

let validateFamily: ValidateFunction | undefined;

/**
 * The validator precompiled by the build (compiling the schema costs a simulator child ~150 ms of CPU at start),
 * else compiled here (running from the sources); loaded on first use, synchronously, so the module has no
 * top-level await and can be bundled into the simulator's startup snapshot (src/build/sim-snapshot.ts).
 */
export function familyValidator(): ValidateFunction {
  if (validateFamily) return validateFamily;
  const load = createRequire(import.meta.url);
  const file = fileURLToPath(new URL(PRECOMPILED_FAMILY_VALIDATOR, import.meta.url));
  if (existsSync(file)) validateFamily = load(file) as ValidateFunction;
  else {
    const { Ajv2020 } = load('ajv/dist/2020.js') as typeof Ajv2020Module;
    validateFamily = new Ajv2020(FAMILY_AJV_OPTIONS).compile(FAMILY_SCHEMA);
  }
  return validateFamily;
}

/** Hands in the build's precompiled validator, bundled into the simulator's startup snapshot (no file to load). */
export function presetFamilyValidator(validate: ValidateFunction): void {
  validateFamily = validate;
}

/** Directory holding the bundled family files (read at each call: a startup snapshot is built elsewhere). */
export function builtinFamilyDir(): string {
  return join(dirname(fileURLToPath(import.meta.url)), 'devices');
}

export { BUILTIN_FAMILIES };

/**
 * Parses and checks a family definition: schema (family-schema.ts), one model per capability,
 * known state variables and inputs. Throws `MHS.HOST.MANIFEST_INVALID` with `details.errors`.
 */
export function parseFamily(raw: unknown, source: string): FamilyDefinition {
  const validate = familyValidator();
  if (!validate(raw)) {
    throw new HostError(ErrorCode.HOST_MANIFEST_INVALID, `family definition ${source} does not match its schema`, {
      source,
      errors: validate.errors?.map((e) => `${e.instancePath} ${e.message ?? ''}`) ?? [],
    });
  }
  const def = raw as unknown as FamilyDefinition;
  const errors: string[] = [];
  const vars = new Set(Object.keys(def.model.state));
  for (const cap of def.device.capabilities) {
    const m = def.model.capabilities[cap.capability_id];
    if (!m) {
      errors.push(`capability ${cap.capability_id} has no model`);
      continue;
    }
    const props = (cap.input_schema['properties'] ?? {}) as Record<string, unknown>;
    const inputs = [m.duration && 'input' in m.duration ? m.duration.input : undefined];
    for (const u of m.updates ?? []) {
      if (!vars.has(u.var)) errors.push(`${cap.capability_id}: unknown state variable ${u.var}`);
      for (const b of [u.min_var, u.max_var]) if (b && !vars.has(b)) errors.push(`unknown bound variable ${b}`);
      inputs.push(u.input);
    }
    for (const e of m.effects ?? []) inputs.push(e.input);
    for (const i of inputs) if (i && !(i in props)) errors.push(`${cap.capability_id}: unknown input ${i}`);
    for (const v of Object.values(m.output ?? {})) if (!vars.has(v)) errors.push(`unknown output variable ${v}`);
    if (m.duration?.kind === 'approach' && !vars.has(m.duration.var)) errors.push(`unknown variable ${m.duration.var}`);
  }
  const mode = def.device.mode;
  if ((mode === 'simulated' || mode === 'hybrid') && !def.device.fidelity) errors.push('fidelity.gaps is required');
  if (def.device.estop.kind !== 'software' && !def.device.estop.physical_ref)
    errors.push('estop.physical_ref required');
  if (errors.length) {
    throw new HostError(ErrorCode.HOST_MANIFEST_INVALID, `family definition ${source} is inconsistent`, {
      source,
      errors,
    });
  }
  return def;
}

/** Loads a family by bundled name or by file path (`--device FILE`). */
export function loadFamily(nameOrFile: string): FamilyDefinition {
  const builtin = join(builtinFamilyDir(), `${nameOrFile}.json`);
  const file = /^[a-z0-9-]+$/.test(nameOrFile) && existsSync(builtin) ? builtin : nameOrFile;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new HostError(
      ErrorCode.HOST_CONFIG_INVALID,
      `unknown device family or unreadable file: ${nameOrFile}`,
      { family: nameOrFile, known: [...BUILTIN_FAMILIES] },
      { cause: err, remediation: `use one of ${BUILTIN_FAMILIES.join(', ')} or --device FILE` },
    );
  }
  return parseFamily(raw, file);
}
