import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ErrorCode } from '../../core/index.js';
import type { HostError } from '../../core/index.js';
import { openwopDir } from '../schemas.js';

/** `schemas/v2/error-envelope.schema.json`: closed `{ error, message, details? }`. */
export interface V2ErrorEnvelope {
  error: string;
  message: string;
  details?: Record<string, unknown>;
}

let registry: { status: Record<string, number>; retriable: Set<string> } | undefined;

/** The v2 error registry as published: code → HTTP status (`x-openwop-http-status`) and the retriable set. */
function v2Registry(): { status: Record<string, number>; retriable: Set<string> } {
  if (!registry) {
    const doc = JSON.parse(readFileSync(join(openwopDir(), 'schemas/v2/error-envelope.schema.json'), 'utf8')) as {
      'x-openwop-http-status': Record<string, number>;
      'x-openwop-retriable': string[];
    };
    registry = { status: doc['x-openwop-http-status'], retriable: new Set(doc['x-openwop-retriable']) };
  }
  return registry;
}

/** Host codes whose v2 name differs; every other host code that is a v2 registry row keeps its name. */
const RENAMED: Partial<Record<string, string>> = {
  [ErrorCode.UNAUTHORIZED]: 'unauthenticated',
  [ErrorCode.HOST_POLICY_DENIED]: 'forbidden',
  [ErrorCode.HOST_LEDGER_UNAVAILABLE]: 'runner_unavailable',
};

/**
 * Host codes with no v2 row that are a registered v2 class (the prompt library's, RFC 0028): answered as that
 * class with the host code in `details.hostCode`, so a caller fault stays a caller fault (v2 errors.md: a code that is
 * not registered is not a protocol error).
 */
const FOLDED: Partial<Record<string, string>> = {
  // The conformance seams' refusal of a malformed body (host-sample-test-seams.md), a caller fault.
  [ErrorCode.INVALID_ARGUMENT]: 'validation_error',
  [ErrorCode.PROMPT_NOT_FOUND]: 'not_found',
  [ErrorCode.PROMPT_REF_INVALID]: 'validation_error',
  [ErrorCode.PROMPT_REF_UNPINNED]: 'validation_error',
  [ErrorCode.PROMPT_TEMPLATE_INVALID]: 'validation_error',
  [ErrorCode.PROMPT_VARIABLE_UNRESOLVED]: 'validation_error',
  [ErrorCode.PROMPT_VERSION_PINNED]: 'not_found',
  [ErrorCode.PROMPT_TEMPLATE_CONFLICT]: 'version_conflict',
};

/**
 * Rebuilds a host error as a v2 wire error: its registry code and the status the registry assigns. `conflict`
 * names `runner_unavailable` when retryable, `run_state_conflict` (with `details.runStatus`) when it reports a run
 * status, else `version_conflict`. A
 * code with no v2 row becomes `internal_error` (500) with the host code in `details.hostCode`, never a caller-fault
 * code.
 */
export function toV2Error(e: HostError): { status: number; body: V2ErrorEnvelope } {
  const reg = v2Registry();
  const details: Record<string, unknown> = { ...e.details };
  let code = RENAMED[e.code] ?? e.code;
  const folded = FOLDED[e.code];
  if (folded) {
    details.hostCode = e.code;
    code = folded;
  }
  if (e.code === ErrorCode.CONFLICT) {
    // A retryable conflict is the host shutting down (run-manager.ts), not a state the caller can fix.
    if (e.retryable) code = 'runner_unavailable';
    else if (typeof details.status === 'string') {
      code = 'run_state_conflict';
      details.runStatus = details.status;
    } else code = 'version_conflict';
  }
  if (reg.status[code] === undefined) {
    details.hostCode = e.code;
    code = 'internal_error';
  }
  const body: V2ErrorEnvelope = { error: code, message: e.message || code };
  if (Object.keys(details).length) body.details = details;
  return { status: reg.status[code]!, body };
}

/** The HTTP status the v2 registry assigns to `code` (undefined for a code with no row). */
export function v2StatusOf(code: string): number | undefined {
  return v2Registry().status[code];
}
