import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import { ErrorCode, HostError } from '../../core/index.js';
import { RUN_OPTION_KEYS, V1_RUN_TIMEOUT_KEY } from '../run-options.js';
import { openwopDir } from '../schemas.js';

/**
 * The v2 `configurable` keys this host honours, by section, with the engine's run-option key for each (the engine
 * reads one flat map, the v1 `RunOptions.configurable`): `run.recursionLimit` (clamped to
 * `limits.maxNodeExecutions`), `run.runTimeoutMs` (the run's wall-clock ceiling, RFC 0058), `run.maxLoopIterations`
 * (orchestrator turns, RFC 0058), `ai.model` (the run's model, RFC 0029), `ai.temperature` and `ai.maxTokens` (on
 * every provider request of the run) and `ai.mockProvider` (test seams only). The keys the v1 engine did not read sit
 * under host-named engine keys (run-options.ts), so a v1 run is read as before.
 */
const HONOURED: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  run: {
    recursionLimit: 'recursionLimit',
    runTimeoutMs: RUN_OPTION_KEYS.runTimeoutMs,
    maxLoopIterations: RUN_OPTION_KEYS.maxLoopIterations,
  },
  ai: {
    model: 'model',
    temperature: RUN_OPTION_KEYS.temperature,
    maxTokens: RUN_OPTION_KEYS.maxTokens,
    mockProvider: 'mockProvider',
  },
};

/** Where the keys of a v1 run that have no v2 seat surface in its v2 `configurable` (an `extensions` org key). */
export const V1_CONFIGURABLE_EXTENSION = 'mhs-host';

let validate: ValidateFunction | undefined;

function schema(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(openwopDir(), `schemas/v2/${name}.schema.json`), 'utf8')) as Record<
    string,
    unknown
  >;
}

function refuse(field: string, message: string): HostError {
  return new HostError(ErrorCode.VALIDATION_ERROR, message, { field });
}

/**
 * Maps a v2 `configurable` (create body or fork overlay) to the engine's run options (v2 runs.md §"Run options").
 * Validated against the vendored closed schema (`schemas/v2/configurable.schema.json`): an unknown or dotted key,
 * a missing `version` or an out-of-range value is `400 validation_error` with `details.errors`. A declared key this
 * host does not honour is refused, never accepted and ignored: `ai.credentialRef` is `403 credential_forbidden` (no
 * `aiProviders.byok`), every other one `400 validation_error` with `details.field` naming it. `extensions` is
 * persisted as given.
 */
export function fromV2Configurable(raw: unknown, path = '/configurable'): Record<string, unknown> {
  if (!validate) {
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    ajv.addSchema(schema('budget-policy'));
    validate = ajv.compile(schema('configurable'));
  }
  if (!validate(raw)) {
    const errors = (validate.errors ?? []).map((e) => ({ path: `${path}${e.instancePath}`, message: e.message ?? '' }));
    throw new HostError(ErrorCode.VALIDATION_ERROR, 'configurable is not a valid v2 configurable', { errors });
  }
  const cfg = raw as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [section, value] of Object.entries(cfg)) {
    if (section === 'version') continue;
    if (section === 'extensions') {
      out.extensions = value;
      continue;
    }
    // An empty section (e.g. `budget: {}`, every dimension at the host default) asks for nothing to honour.
    const honoured = HONOURED[section];
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const field = `configurable.${section}.${k}`;
      if (section === 'ai' && k === 'credentialRef')
        throw new HostError(ErrorCode.CREDENTIAL_FORBIDDEN, `${field} names no provider this host accepts keys for`, {
          field,
        });
      const key = honoured?.[k];
      if (!key) throw refuse(field, `${field} is not honoured by this host`);
      out[key] = v;
    }
  }
  return out;
}

/**
 * The engine's run options as a v2 `configurable` (`version: 1`): each honoured key in its section, `extensions` as
 * persisted, and the keys of a v1 run that have no v2 seat under `extensions["mhs-host"]` (kept, not dropped).
 */
export function toV2Configurable(flat: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = { version: 1 };
  const seat = new Map<string, [string, string]>();
  for (const [section, keys] of Object.entries(HONOURED))
    for (const [k, engineKey] of Object.entries(keys)) seat.set(engineKey, [section, k]);
  // A v1 run's `runTimeoutMs` is honoured (RFC 0058), so it has the v2 seat when it is one the v2 schema admits.
  const v1Timeout = flat[V1_RUN_TIMEOUT_KEY];
  if (flat[RUN_OPTION_KEYS.runTimeoutMs] === undefined && Number.isInteger(v1Timeout) && (v1Timeout as number) > 0)
    seat.set(V1_RUN_TIMEOUT_KEY, ['run', 'runTimeoutMs']);
  const extensions: Record<string, unknown> = {};
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(flat)) {
    const at = seat.get(k);
    if (at) {
      const section = (out[at[0]] ??= {}) as Record<string, unknown>;
      section[at[1]] = v;
    } else if (k === 'extensions' && v && typeof v === 'object' && !Array.isArray(v)) Object.assign(extensions, v);
    else rest[k] = v;
  }
  if (Object.keys(rest).length) extensions[V1_CONFIGURABLE_EXTENSION] = { ...rest };
  if (Object.keys(extensions).length) out.extensions = extensions;
  return out;
}
