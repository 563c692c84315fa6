/**
 * Runtime validation of wire objects against `wire-schemas.ts`. The ajv instance and every
 * validator are built once per process, on first use.
 */
import Ajv2020Module from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { ErrorCode, HostError } from '../core/index.js';
import type { ErrorCode as ErrorCodeT } from '../core/index.js';
import { WIRE_SCHEMAS } from './wire-schemas.js';
import type { WireKind } from './wire-schemas.js';
import type {
  DeviceProfile,
  EndpointDescriptor,
  EvidenceBundle,
  Manifest,
  Permit,
  ReadResult,
  Receipt,
  SafetyStatus,
  Session,
  CapabilityBinding,
  ConformanceClaim,
} from './wire-types.js';
import type { MhsWireError } from '../core/index.js';

/** The TS shape each schema validates. */
export interface WireShapes {
  'mhs-error': MhsWireError;
  conformance: ConformanceClaim;
  descriptor: EndpointDescriptor;
  'capability-binding': CapabilityBinding;
  'device-profile': DeviceProfile;
  manifest: Manifest;
  session: Session;
  receipt: Receipt;
  'read-result': ReadResult;
  safety: SafetyStatus;
  permit: Permit;
  'evidence-bundle': EvidenceBundle;
}

/** One schema violation, in a form a person and a test can read. */
export interface WireIssue {
  path: string;
  message: string;
  keyword: string;
}

export type WireCheck<T> = { ok: true; value: T } | { ok: false; issues: WireIssue[] };

// ajv ships CJS; under NodeNext the default export is the module object.
const Ajv2020 = ((Ajv2020Module as unknown as { default?: unknown }).default ?? Ajv2020Module) as new (
  opts: Record<string, unknown>,
) => {
  addSchema(schema: object): unknown;
  getSchema(id: string): ValidateFunction | undefined;
  addKeyword(def: { keyword: string; schemaType?: string }): unknown;
};

let validators: Map<WireKind, ValidateFunction> | undefined;
let builds = 0;
let shared: InstanceType<typeof Ajv2020> | undefined;

function ajvInstance(): InstanceType<typeof Ajv2020> {
  return (shared ??= new Ajv2020({ allErrors: true, strict: false }));
}

function compiled(): Map<WireKind, ValidateFunction> {
  if (validators) return validators;
  builds++;
  const ajv = ajvInstance();
  for (const schema of Object.values(WIRE_SCHEMAS)) ajv.addSchema(schema);
  const map = new Map<WireKind, ValidateFunction>();
  for (const [kind, schema] of Object.entries(WIRE_SCHEMAS) as Array<[WireKind, { $id: string }]>) {
    const fn = ajv.getSchema(schema.$id);
    if (!fn) throw new HostError(ErrorCode.HOST_INTERNAL, `wire schema ${kind} did not compile`);
    map.set(kind, fn);
  }
  validators = map;
  return map;
}

function issuesOf(errors: ErrorObject[] | null | undefined): WireIssue[] {
  return (errors ?? []).map((e) => ({
    path: e.instancePath || '/',
    message: e.message ?? e.keyword,
    keyword: e.keyword,
  }));
}

/** Validates `value` as the wire object `kind`; never throws. */
export function checkWire<K extends WireKind>(kind: K, value: unknown): WireCheck<WireShapes[K]> {
  const fn = compiled().get(kind);
  if (!fn) return { ok: false, issues: [{ path: '/', message: `no schema for ${kind}`, keyword: 'schema' }] };
  if (fn(value)) return { ok: true, value: value as WireShapes[K] };
  return { ok: false, issues: issuesOf(fn.errors) };
}

/**
 * Validates `value` as `kind` and returns it typed.
 * @throws HostError `code` (default `MHS.SCHEMA.INVALID_INPUT`) with `details.issues` and `details.source`.
 */
export function assertWire<K extends WireKind>(
  kind: K,
  value: unknown,
  opts: { code?: ErrorCodeT; source?: string } = {},
): WireShapes[K] {
  const r = checkWire(kind, value);
  if (r.ok) return r.value;
  const where = opts.source ? ` from ${opts.source}` : '';
  throw new HostError(
    opts.code ?? ErrorCode.SCHEMA_INVALID_INPUT,
    `${kind}${where} does not match the wire contract: ${r.issues
      .slice(0, 3)
      .map((i) => `${i.path} ${i.message}`)
      .join('; ')}`,
    { kind, issues: r.issues, ...(opts.source ? { source: opts.source } : {}) },
    { remediation: 'Fix the endpoint so that it follows shared/spec/mhs-wire.md.' },
  );
}

/**
 * A checker for a host-side document (e.g. endpoints.json) built on the same ajv instance. Call it
 * once at module level; the schema is compiled on first use and kept.
 */
export function documentChecker<T>(schema: { $id: string }): (value: unknown) => WireCheck<T> {
  let fn: ValidateFunction | undefined;
  return (value) => {
    if (!fn) {
      compiled();
      const ajv = ajvInstance();
      fn = ajv.getSchema(schema.$id) ?? (ajv.addSchema(schema), ajv.getSchema(schema.$id));
    }
    if (!fn) return { ok: false, issues: [{ path: '/', message: 'schema did not compile', keyword: 'schema' }] };
    if (fn(value)) return { ok: true, value: value as T };
    return { ok: false, issues: issuesOf(fn.errors) };
  };
}

/** @internal How many times the validator set was built (tests check: once) and its size. */
export function _compileStats(): { builds: number; validators: number } {
  return { validators: compiled().size, builds };
}
