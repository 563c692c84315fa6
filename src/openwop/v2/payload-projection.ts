/**
 * The v2 payload contract on the v2 read paths (events.md; `schemas/v2/run-event-payloads.schema.json`, RFC 0171 §A.4:
 * the root `_typeIndex` is normative and every definition is closed). The engine writes one log for both majors, and
 * some payloads carry host fields the closed v2 definition has no seat for (a replayed node's `replayedFrom`, a failed
 * node's `typeId`, an interrupt's engine identity) or v1 value forms. The v2 projection of a payload, read off its
 * definition: a top-level id the definition types as a tenant-bound id (`ids.schema.json`, `x-openwop-tenant-bound`) is
 * bound (`run_01H…` → `local/run-01H…`, identity.md §5), a top-level integer written as a decimal string is an integer
 * (RFC 0172 §B axis 3: "integer everywhere"), and the top-level properties the definition does not declare are left
 * out, when that makes it valid; the stored event (and the v1 read path) keep everything. An interrupt resolution's
 * `resolvedBy` and `decision` are read off its v1 `decidedBy` and `action` first (resolution-payload.ts).
 * A payload that is still invalid without them, or whose type has no definition, passes through as written (a reader
 * MUST tolerate unknown types; nothing is fabricated to make a payload fit).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { NATIVE_PAYLOADS } from '../native-events.js';
import { openwopDir } from '../schemas.js';
import { V2_TENANT, projectPathSegment, toOpaque } from './ids.js';
import { withResolutionSeats } from './resolution-payload.js';

// ajv-formats ships CJS; under NodeNext its default export is the module object.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv2020,
) => void;

const PAYLOADS_ID = 'https://openwop.dev/spec/v2/run-event-payloads.schema.json';

/** How a top-level field of a definition is projected: bound as a tenant-bound id, or read as an integer. */
type FieldForm = 'tenant-bound' | 'integer';

interface Contract {
  /** v2 type → the `$defs` pointer of its payload. */
  index: ReadonlyMap<string, string>;
  /** `$defs` pointer → the forms of its top-level fields. */
  forms: ReadonlyMap<string, ReadonlyMap<string, FieldForm>>;
  validator(ref: string): ValidateFunction;
}

type Schema = { $ref?: string; type?: unknown; properties?: Record<string, Schema> };

/** The top-level field forms of one payload definition (an alias `{$ref: '#/$defs/x'}` is followed once). */
function fieldForms(defs: Record<string, Schema>, name: string, bound: ReadonlySet<string>): Map<string, FieldForm> {
  let def = defs[name];
  const alias = def?.$ref?.match(/^#\/\$defs\/(.+)$/);
  if (alias) def = defs[alias[1]!];
  const out = new Map<string, FieldForm>();
  for (const [field, s] of Object.entries(def?.properties ?? {})) {
    const id = s.$ref?.match(/^ids\.schema\.json#\/\$defs\/(.+)$/);
    if (id && bound.has(id[1]!)) out.set(field, 'tenant-bound');
    else if (s.type === 'integer') out.set(field, 'integer');
  }
  return out;
}

let contract: Contract | undefined;

function load(): Contract {
  const dir = join(openwopDir(), 'schemas/v2');
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.schema.json')))
    ajv.addSchema(JSON.parse(readFileSync(join(dir, f), 'utf8')) as object);
  const doc = JSON.parse(readFileSync(join(dir, 'run-event-payloads.schema.json'), 'utf8')) as {
    $defs: Record<string, Schema>;
    _typeIndex: { properties: Record<string, { $ref: string }> };
  };
  const ids = JSON.parse(readFileSync(join(dir, 'ids.schema.json'), 'utf8')) as {
    $defs: Record<string, { 'x-openwop-tenant-bound'?: boolean }>;
  };
  const bound = new Set(Object.entries(ids.$defs).flatMap(([k, d]) => (d['x-openwop-tenant-bound'] ? [k] : [])));
  const index = new Map(Object.entries(doc._typeIndex.properties).map(([t, r]) => [t, r.$ref]));
  const forms = new Map(
    [...new Set(index.values())].map((ref) => [ref, fieldForms(doc.$defs, ref.replace('#/$defs/', ''), bound)]),
  );
  const cache = new Map<string, ValidateFunction>();
  return {
    index,
    forms,
    validator(ref) {
      let v = cache.get(ref);
      if (!v) {
        v = ajv.getSchema(`${PAYLOADS_ID}${ref}`)!;
        cache.set(ref, v);
      }
      return v;
    },
  };
}

/** The outcome of checking one payload: `conforms` as written, `projected` (undeclared fields dropped), or not. */
export type PayloadCheck = 'conforms' | 'projected' | 'nonconforming' | 'untyped';

/** The payload's own properties its definition does not declare (not those a `oneOf`/`anyOf` branch rejects). */
function undeclared(errors: readonly ErrorObject[]): string[] {
  return errors
    .filter(
      (e) =>
        e.keyword === 'additionalProperties' &&
        e.instancePath === '' &&
        !/(One|Any|All)Of|\/(if|then|else)\//i.test(e.schemaPath),
    )
    .map((e) => (e.params as { additionalProperty: string }).additionalProperty);
}

/**
 * The opaque segment of an engine id: `run_01H…` → `run-01H…` (ids.ts); an id outside the opaque grammar (an interrupt
 * id `run_…:gate:1:0`) in the RFC 0184 path projection (`~HH` per other byte), which the grammar admits and inverts.
 */
function opaqueOf(engineId: string): string {
  const o = toOpaque(engineId);
  return /^[A-Za-z0-9._~-]{16,128}$/.test(o) ? o : projectPathSegment(engineId);
}

/** A copy of `payload` with its top-level engine ids bound and decimal-string integers read as integers. */
function withForms(payload: Record<string, unknown>, forms: ReadonlyMap<string, FieldForm>): Record<string, unknown> {
  const out = { ...payload };
  for (const [field, form] of forms) {
    const v = out[field];
    if (typeof v !== 'string') continue;
    if (form === 'tenant-bound' && !v.includes('/')) out[field] = `${V2_TENANT}/${opaqueOf(v)}`;
    else if (form === 'integer' && /^(0|[1-9]\d{0,14})$/.test(v)) out[field] = Number(v);
  }
  return out;
}

/**
 * The v2 payload of an event of v2 type `type`, and how it relates to the vendored definition. Pure: `payload` is not
 * changed (a projected payload is a copy).
 */
export function projectPayload(type: string, payload: unknown): { payload: unknown; check: PayloadCheck } {
  // An interrupt resolution's v2 seats (`resolvedBy`, `decision`) read off its v1 fields, kept only when the result
  // conforms (a principal outside the v2 subjectId grammar leaves the payload as the rules below project it).
  const seated = withResolutionSeats(type, payload);
  if (seated) {
    const projected = projectOnto(type, seated);
    if (projected.check === 'conforms' || projected.check === 'projected')
      return { payload: projected.payload, check: 'projected' };
  }
  return projectOnto(type, payload);
}

function projectOnto(type: string, payload: unknown): { payload: unknown; check: PayloadCheck } {
  // A v2-native type (native-events.ts) is written in its v2 shape under its own, later schema (RFC 0242 adds
  // `negotiation.decided.requested`), so the vendored definition does not rewrite it.
  if (type in NATIVE_PAYLOADS) return { payload, check: 'untyped' };
  contract ??= load();
  const ref = contract.index.get(type);
  if (!ref) return { payload, check: 'untyped' };
  const validate = contract.validator(ref);
  if (validate(payload)) return { payload, check: 'conforms' };
  if (!payload || typeof payload !== 'object' || Array.isArray(payload)) return { payload, check: 'nonconforming' };
  const formed = withForms(payload as Record<string, unknown>, contract.forms.get(ref)!);
  if (validate(formed)) return { payload: formed, check: 'projected' };
  const extra = new Set(undeclared(validate.errors ?? []));
  const copy = Object.fromEntries(Object.entries(formed).filter(([k]) => !extra.has(k)));
  return extra.size && validate(copy) ? { payload: copy, check: 'projected' } : { payload, check: 'nonconforming' };
}
