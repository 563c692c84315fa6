import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ErrorCode, HostError } from '../../core/index.js';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv2020,
) => void;

// The request bodies of the two effect seams of the v2 seams profile, as published (openwop/openwop
// scripts/derive-v2-api.py @ 7c81ace8312c, which generates api/seams-v2.yaml).
const FIRE_BODY = {
  type: 'object',
  additionalProperties: false,
  required: ['seam'],
  properties: {
    seam: { type: 'string', minLength: 1 },
    receiverUrl: { type: 'string', format: 'uri' },
  },
} as const;

const RETRY_BODY = {
  type: 'object',
  additionalProperties: false,
  required: ['providerUrl'],
  properties: { providerUrl: { type: 'string', format: 'uri' } },
} as const;

/** `fireEffectSeam`: the manifest row to fire and, optionally, where its effect goes. */
export interface FireEffectSeamBody {
  seam: string;
  receiverUrl?: string;
}

/** `forceEffectTransportRetry`: the suite's fixture provider. */
export interface EffectRetryBody {
  providerUrl: string;
}

let ajv: Ajv2020 | undefined;
const compiled = new Map<object, ValidateFunction>();

function check<T>(schema: object, body: unknown, what: string): T {
  if (!ajv) {
    ajv = new Ajv2020({ allErrors: true, strict: false });
    addFormats(ajv);
  }
  let v = compiled.get(schema);
  if (!v) compiled.set(schema, (v = ajv.compile(schema)));
  if (!v(body)) {
    const errors = (v.errors ?? []).map((e) => ({ path: e.instancePath || '/', message: e.message ?? '' }));
    throw new HostError(ErrorCode.VALIDATION_ERROR, `the ${what} body is not valid (api/seams-v2.yaml)`, { errors });
  }
  return body as T;
}

/** Checks a `fireEffectSeam` body; raises `validation_error` with `details.errors[{path, message}]`. */
export function parseFireEffectSeam(body: unknown): FireEffectSeamBody {
  return check<FireEffectSeamBody>(FIRE_BODY, body, 'fireEffectSeam');
}

/** Checks a `forceEffectTransportRetry` body; raises `validation_error` with `details.errors[{path, message}]`. */
export function parseEffectRetry(body: unknown): EffectRetryBody {
  return check<EffectRetryBody>(RETRY_BODY, body, 'forceEffectTransportRetry');
}
