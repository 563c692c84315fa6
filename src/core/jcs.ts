import { createHash, hash as oneShotHash } from 'node:crypto';
import canonicalizeLib from 'canonicalize';
import { assertJcsEncodable } from './json-encodable.js';

const canonicalizeFn = canonicalizeLib as unknown as (value: unknown) => string | undefined;

/**
 * RFC 8785 canonical JSON text of `value`. Throws on values JSON cannot represent, and `MHS.HOST.JSON_UNENCODABLE`
 * (with the path) on a lone UTF-16 surrogate, which JCS cannot encode.
 */
export function jcs(value: unknown): string {
  let text: string | undefined;
  try {
    text = canonicalizeFn(value);
  } catch (err) {
    assertJcsEncodable(value, 'the value');
    throw err;
  }
  if (text === undefined) throw new TypeError('value has no JSON representation');
  return text;
}

/** Lowercase hex SHA-256 of a string's UTF-8 bytes or of raw bytes. */
export function sha256Hex(data: string | Uint8Array): string {
  // `crypto.hash` (Node ≥ 20.12) is the one-shot form: about half the cost per call of a Hash object (issue 21).
  return typeof oneShotHash === 'function'
    ? oneShotHash('sha256', data, 'hex')
    : createHash('sha256').update(data).digest('hex');
}

/** `H(x)` of the wire contract §1: lowercase hex SHA-256 of `JCS(x)`. */
export function H(value: unknown): string {
  return sha256Hex(jcs(value));
}

/** Short input digest shown on approval surfaces (wire contract §1): first 12 hex characters. */
export function shortDigest(digest: string): string {
  return digest.slice(0, 12);
}
