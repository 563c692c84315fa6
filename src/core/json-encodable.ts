import { ErrorCode } from './error-codes.js';
import { HostError } from './errors.js';

// A lone UTF-16 surrogate: a high one not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

/** `s` with every lone surrogate replaced by U+FFFD (what `String.prototype.toWellFormed` does). */
export function wellFormed(s: string): string {
  return s.replace(LONE_SURROGATES, '\uFFFD');
}

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** True when `s` holds a lone UTF-16 surrogate, which RFC 8785 (JCS) and UTF-8 cannot encode. */
export function hasLoneSurrogate(s: string): boolean {
  return LONE_SURROGATE.test(s);
}

/**
 * The JSON Pointer of the first string (a key or a value) in `value` that JCS cannot encode, or null when every
 * string can be. Walks plain JSON data only (objects, arrays, primitives); cycles are not followed twice. The
 * pointer is built only on a hit, while unwinding (issue 21: this walk runs on every reply, nearly always clean).
 */
export function unencodablePath(value: unknown): string | null {
  const seen = new Set<object>();
  /** The reference tokens below `v` down to the hit, innermost first; null when none. */
  const walk = (v: unknown): string[] | null => {
    if (typeof v === 'string') return hasLoneSurrogate(v) ? [] : null;
    if (v === null || typeof v !== 'object' || seen.has(v)) return null;
    seen.add(v);
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const hit = walk(v[i]);
        if (hit !== null) return (hit.push(String(i)), hit);
      }
      return null;
    }
    const o = v as Record<string, unknown>;
    for (const k in o) {
      if (!Object.prototype.hasOwnProperty.call(o, k)) continue;
      if (hasLoneSurrogate(k)) return [k];
      const hit = walk(o[k]);
      if (hit !== null) return (hit.push(k), hit);
    }
    return null;
  };
  const tokens = walk(value);
  return tokens === null
    ? null
    : tokens
        .reverse()
        .map((t) => `/${escapePointer(t)}`)
        .join('');
}

/**
 * The one canonical-JSON boundary (issue 16 item 3): throws `code` (default `MHS.HOST.JSON_UNENCODABLE`) with
 * `details.path` (a JSON Pointer, with no copy of the bad string) when `value` holds a string JCS cannot encode.
 * Callers pick the code that names whose fault it is: `validation_error` for API input,
 * `MHS.SCHEMA.INVALID_INPUT` for tool arguments.
 */
export function assertJcsEncodable(
  value: unknown,
  what: string,
  code: ErrorCode = ErrorCode.HOST_JSON_UNENCODABLE,
  details: Record<string, unknown> = {},
): void {
  const path = unencodablePath(value);
  if (path === null) return;
  throw new HostError(
    code,
    `${what} holds a string that canonical JSON cannot encode (a lone UTF-16 surrogate) at ${path || '/'}`,
    { ...details, path, reason: 'lone_surrogate' },
    { remediation: 'Send well-formed Unicode text: every UTF-16 surrogate must be part of a pair.' },
  );
}
