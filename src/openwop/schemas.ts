import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ErrorCode, HostError } from '../core/index.js';
import { NATIVE_PAYLOADS, v2NativeTypes } from './native-events.js';

// ajv-formats ships CJS; under NodeNext its default export is the module object.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv2020,
) => void;

/** Root of the repository (this file is `src/openwop/schemas.ts`). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Where the vendored OpenWOP data files live (`vendor/openwop`); `MHS_OPENWOP_DIR` overrides it. */
export function openwopDir(): string {
  return process.env.MHS_OPENWOP_DIR ?? join(REPO_ROOT, 'vendor/openwop');
}

const ID_BASE = 'https://openwop.dev/spec/v1/';

/** `$id` of a shared schema by file name, e.g. `workflow-definition` → `https://openwop.dev/spec/v1/workflow-definition.schema.json`. */
export function schemaId(name: string): string {
  return `${ID_BASE}${name}.schema.json`;
}

/** One validation problem, path in JSON Pointer form (`/nodes/0/typeId`). */
export interface SchemaIssue {
  path: string;
  message: string;
  keyword: string;
}

/** Validators over every OpenWOP schema, compiled once per process. */
export interface OpenwopSchemas {
  /** The `$id`s loaded from disk. */
  readonly ids: readonly string[];
  /** Issues of `value` against the schema `$id` (or `$id#/$defs/x`); empty when valid. */
  check(id: string, value: unknown): SchemaIssue[];
  /** Raises `validation_error` with `details.errors` (paths) when `value` does not validate. */
  assert(id: string, value: unknown, what: string): void;
  /** Issues of a run event against run-event.schema.json and, for a known type, its payload $def. */
  checkEvent(event: unknown): SchemaIssue[];
  /** Compiles every loaded schema now (a broken vendored set throws here rather than on first use). */
  compileAll(): void;
}

function listSchemaFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...listSchemaFiles(p));
    else if (name.endsWith('.schema.json')) out.push(p);
  }
  return out.sort();
}

function toIssues(errors: ErrorObject[] | null | undefined): SchemaIssue[] {
  return (errors ?? []).map((e) => {
    // A missing property is named in the path itself, so details point at what to add.
    const missing = e.keyword === 'required' ? (e.params as { missingProperty?: string }).missingProperty : undefined;
    const path = missing ? `${e.instancePath}/${missing}` : e.instancePath || '/';
    return { path, message: e.message ?? 'invalid', keyword: e.keyword };
  });
}

/** Validators over the schemas of `dir` (a `vendor/openwop` layout), each compiled on first use. */
export function loadOpenwopSchemas(dir: string): OpenwopSchemas {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const schemaDir = join(dir, 'schemas');
  const ids: string[] = [];
  for (const file of listSchemaFiles(schemaDir)) {
    const schema = JSON.parse(readFileSync(file, 'utf8')) as { $id?: string };
    if (typeof schema.$id !== 'string') {
      throw new HostError(ErrorCode.HOST_CONFIG_INVALID, `schema without $id: ${relative(dir, file)}`);
    }
    ajv.addSchema(schema);
    ids.push(schema.$id);
  }
  const cache = new Map<string, ValidateFunction>();
  const validator = (id: string): ValidateFunction => {
    let v = cache.get(id);
    if (!v) {
      v = ajv.getSchema(id);
      if (!v) throw new HostError(ErrorCode.HOST_CONFIG_INVALID, `unknown schema ${id}`);
      cache.set(id, v);
    }
    return v;
  };
  // Each schema is compiled on first use (compiling the whole vendored set took most of a `serve` start); addSchema
  // above already checked each against its meta-schema, and `compileAll` (test/openwop/vendored-schemas.test.ts)
  // compiles every one.

  const payloads = JSON.parse(readFileSync(join(schemaDir, 'run-event-payloads.schema.json'), 'utf8')) as {
    $defs: { _typeIndex: { properties: Record<string, { $ref: string }> } };
  };
  const payloadRef = new Map<string, string>();
  for (const [type, ref] of Object.entries(payloads.$defs._typeIndex.properties)) {
    payloadRef.set(type, schemaId('run-event-payloads') + ref.$ref);
  }

  // A v2-native type (native-events.ts) is checked against its own payload schema; it must still be one.
  const native = v2NativeTypes(dir);
  for (const [type, schema] of Object.entries(NATIVE_PAYLOADS)) {
    if (!native.has(type))
      throw new HostError(ErrorCode.HOST_CONFIG_INVALID, `${type} is not a v2-native event type of the vendored data`);
    ajv.addSchema(schema);
  }

  const check = (id: string, value: unknown): SchemaIssue[] => {
    const v = validator(id);
    return v(value) ? [] : toIssues(v.errors);
  };
  return {
    ids,
    check,
    compileAll() {
      for (const id of ids) validator(id);
    },
    assert(id, value, what) {
      const errors = check(id, value);
      if (errors.length) throw new HostError(ErrorCode.VALIDATION_ERROR, `${what} is not valid`, { errors });
    },
    checkEvent(event) {
      const type = (event as { type?: unknown } | null)?.type;
      const nativePayload = typeof type === 'string' ? NATIVE_PAYLOADS[type] : undefined;
      if (nativePayload) {
        // The v1 envelope, except its closed type enum (which predates the type), and the type's own payload schema.
        const errors = check(schemaId('run-event'), event).filter((e) => e.path !== '/type');
        for (const e of check(nativePayload.$id, (event as { payload: unknown }).payload))
          errors.push({ ...e, path: `/payload${e.path === '/' ? '' : e.path}` });
        return errors;
      }
      const errors = check(schemaId('run-event'), event);
      const ref = typeof type === 'string' ? payloadRef.get(type) : undefined;
      if (ref) {
        for (const e of check(ref, (event as { payload: unknown }).payload))
          errors.push({ ...e, path: `/payload${e.path === '/' ? '' : e.path}` });
      }
      return errors;
    },
  };
}

let shared: OpenwopSchemas | undefined;

/** The process-wide validators (schemas read from {@link openwopDir} on first use, compiled once). */
export function openwopSchemas(): OpenwopSchemas {
  shared ??= loadOpenwopSchemas(openwopDir());
  return shared;
}
