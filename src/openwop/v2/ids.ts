import { ErrorCode, HostError } from '../../core/index.js';

/**
 * The one tenant of this host. Runs are not partitioned by tenant here, so every caller's tenant is this one and a
 * tenant-bound id (v2 identity.md §5) is `local/<opaque>`.
 */
export const V2_TENANT = 'local';

// The engine mints `run_<ULID>` / `evt_<ULID>`; `_` is outside the v2 opaque grammar `[A-Za-z0-9._~-]`, so the
// projection writes the prefix separator as `-` (a ULID is Crockford base32 and never holds `-`, so it inverts).
const ENGINE_ID = /^([a-z]+)_([0-9A-Z]{26})$/;
const V2_OPAQUE = /^([a-z]+)-([0-9A-Z]{26})$/;

/** The v2 opaque form of an engine id (`run_01H…` → `run-01H…`); other strings pass unchanged. */
export function toOpaque(engineId: string): string {
  const m = ENGINE_ID.exec(engineId);
  return m ? `${m[1]}-${m[2]}` : engineId;
}

/** The engine id behind a v2 opaque segment (the inverse of {@link toOpaque}). */
export function fromOpaque(opaque: string): string {
  const m = V2_OPAQUE.exec(opaque);
  return m ? `${m[1]}_${m[2]}` : opaque;
}

/** The tenant-bound v2 `runId` of an engine run (`local/run-01H…`); a v1-minted run reads the same (versioning.md §5). */
export function bindRunId(engineRunId: string): string {
  return `${V2_TENANT}/${toOpaque(engineRunId)}`;
}

/** The v2 `eventId` of an engine event id. */
export function v2EventId(engineEventId: string): string {
  return toOpaque(engineEventId);
}

const PASSTHROUGH = /^[A-Za-z0-9._-]$/;

/** RFC 0184 §A.1 path projection: every UTF-8 byte outside `[A-Za-z0-9._-]` becomes `~HH` (`/` → `~2F`). */
export function projectPathSegment(id: string): string {
  let out = '';
  for (const byte of Buffer.from(id, 'utf8')) {
    const ch = String.fromCharCode(byte);
    out += byte < 0x80 && PASSTHROUGH.test(ch) ? ch : `~${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Inverse of {@link projectPathSegment}; a `~` not followed by two hex digits is `validation_error`. */
export function unprojectPathSegment(segment: string, field = 'runId'): string {
  const bytes: number[] = [];
  const raw = Buffer.from(segment, 'utf8');
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] !== 0x7e) {
      bytes.push(raw[i]!);
      continue;
    }
    const hex = raw.subarray(i + 1, i + 3).toString('latin1');
    if (!/^[0-9A-Fa-f]{2}$/.test(hex))
      throw new HostError(ErrorCode.VALIDATION_ERROR, `${field} has a '~' not followed by two hex digits`, {
        field,
      });
    bytes.push(parseInt(hex, 16));
    i += 2;
  }
  return Buffer.from(bytes).toString('utf8');
}

/**
 * The engine run id a v2 `{runId}` path parameter names. Accepts the projected form (`local~2Frun-…`), the
 * percent-decoded form (`local/run-…`) and, through the overlap, the bare opaque segment a `/v1/` create hands out
 * (`run_…` or `run-…`), resolved under the caller's tenant (identity.md §5). Raises `id_tenant_mismatch` for another
 * tenant and `validation_error` for a malformed projection.
 */
export function runIdFromParam(param: string): string {
  const id = unprojectPathSegment(param);
  const slash = id.indexOf('/');
  if (slash < 0) return fromOpaque(id);
  if (id.slice(0, slash) !== V2_TENANT)
    throw new HostError(ErrorCode.ID_TENANT_MISMATCH, 'the run id names another tenant than the caller');
  return fromOpaque(id.slice(slash + 1));
}

/** The path segment that addresses a run in v2 links (`/runs/<segment>`). */
export function runPathSegment(engineRunId: string): string {
  return projectPathSegment(bindRunId(engineRunId));
}
