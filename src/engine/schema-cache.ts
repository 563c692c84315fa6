import Ajv2020Module from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ErrorCode, H, HostError } from '../core/index.js';

// ajv ships CJS; under NodeNext the default export is the module object.
const Ajv2020 = ((Ajv2020Module as unknown as { default?: unknown }).default ?? Ajv2020Module) as new (
  opts: Record<string, unknown>,
) => { compile(schema: object): ValidateFunction };
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: unknown,
) => void;

/** Validators by schema digest `H(schema)`, shared by every cache of the process (issue 21). */
const BY_DIGEST_MAX = 4096;
let shared: { ajv: { compile(schema: object): ValidateFunction }; byDigest: Map<string, ValidateFunction> } | null =
  null;

function compiledByDigest(schema: Record<string, unknown>): { fn: ValidateFunction; digest: string } {
  if (!shared) {
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    addFormats(ajv);
    shared = { ajv, byDigest: new Map() };
  }
  const digest = H(schema);
  let fn = shared.byDigest.get(digest);
  if (!fn) {
    try {
      fn = shared.ajv.compile(schema);
    } catch {
      // e.g. another schema already took its `$id` in the shared instance: compiled on its own (errors thrown there).
      const own = new Ajv2020({ allErrors: true, strict: false });
      addFormats(own);
      fn = own.compile(schema);
    }
    // Bounded: the oldest digest goes first (an endpoint can advertise any number of schemas).
    if (shared.byDigest.size >= BY_DIGEST_MAX) shared.byDigest.delete(shared.byDigest.keys().next().value as string);
    shared.byDigest.set(digest, fn);
  }
  return { fn, digest };
}

/** Number of validators compiled in this process (one per distinct schema digest still held). */
export function compiledSchemaCount(): number {
  return shared?.byDigest.size ?? 0;
}

/**
 * Capability input validators (HOST-031), looked up per `(manifest_digest, device_id, capability_id)` and compiled
 * once per schema digest: identical schemas of many endpoints share one validator (issue 21), and the hot path
 * never recompiles or re-digests a schema.
 */
export class InputSchemaCache {
  private readonly cache = new Map<string, ValidateFunction>();

  /** Number of bindings this cache resolved. */
  get size(): number {
    return this.cache.size;
  }

  /**
   * Validates `input` (already without `_mhs`) against the binding's `input_schema`.
   * @throws HostError `MHS.SCHEMA.INVALID_INPUT` with `details.issues` (path, message, keyword).
   */
  validate(
    key: { manifestDigest: string; deviceId: string; capabilityId: string },
    schema: Record<string, unknown>,
    input: Record<string, unknown>,
  ): void {
    const k = `${key.manifestDigest}\u0000${key.deviceId}\u0000${key.capabilityId}`;
    let fn = this.cache.get(k);
    if (!fn) {
      fn = compiledByDigest(schema).fn;
      this.cache.set(k, fn);
    }
    if (fn(input)) return;
    const issues = (fn.errors ?? []).map((e) => ({
      path: e.instancePath || '/',
      message: e.message ?? e.keyword,
      keyword: e.keyword,
    }));
    throw new HostError(
      ErrorCode.SCHEMA_INVALID_INPUT,
      `input for ${key.deviceId}/${key.capabilityId} does not match its schema: ${issues
        .slice(0, 3)
        .map((i) => `${i.path} ${i.message}`)
        .join('; ')}`,
      { device_id: key.deviceId, capability_id: key.capabilityId, issues },
      { remediation: 'Fix the input to match the capability input_schema (see mhs__inspect).' },
    );
  }
}
