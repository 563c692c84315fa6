import Ajv2020Module from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ErrorCode, HostError } from '../core/index.js';

// ajv ships CJS; under NodeNext the default export is the module object.
const Ajv2020 = ((Ajv2020Module as unknown as { default?: unknown }).default ?? Ajv2020Module) as new (
  opts: Record<string, unknown>,
) => { compile(schema: object): ValidateFunction };
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: unknown,
) => void;

/**
 * Capability input validators (HOST-031), compiled once per `(manifest_digest, device_id, capability_id)` and
 * reused for every call: the hot path never recompiles a schema.
 */
export class InputSchemaCache {
  private readonly ajv = new Ajv2020({ allErrors: true, strict: false });
  private readonly cache = new Map<string, ValidateFunction>();

  constructor() {
    addFormats(this.ajv);
  }

  /** Number of compiled validators. */
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
      fn = this.ajv.compile(schema);
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
