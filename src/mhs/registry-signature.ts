/**
 * Signed federated registry records (issue 20 item 2, HOST-014: the host shows the trust of the registry record that
 * supplied an endpoint). A record of a federated registry document may carry
 * `"signature": {"alg": "Ed25519", "key_id"?: "...", "value": "<base64url>"}`, an Ed25519 signature (RFC 8032,
 * through node:crypto) over the RFC 8785 form of the record without its `signature` member. Against the registry
 * keys the operator configured (`--registry-key <pem>`): a valid signature makes the record `signed` by that key; a
 * signature no configured key verifies is refused (`MHS.HOST.REGISTRY_SIGNATURE_INVALID`) and the record dropped; a
 * record without one is listed as `unsigned`; a signed record with no key configured is `unverified`.
 */
import { createHash, createPublicKey, sign, verify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { ErrorCode, HostError, isJsonObject, jcs } from '../core/index.js';

/** A public key the operator trusts to sign registry records; `id` is its fingerprint. */
export interface RegistryKey {
  id: string;
  key: KeyObject;
}

/** What a record's signature proved. */
export type RecordTrust =
  | { record: 'signed'; key_id: string }
  | { record: 'unsigned' }
  | { record: 'unverified' }
  | { record: 'invalid'; reason: string };

/** `sha256:` + the first 16 hex of the SHA-256 of the key's SPKI DER form. */
export function keyFingerprint(key: KeyObject): string {
  return `sha256:${createHash('sha256')
    .update(key.export({ type: 'spki', format: 'der' }))
    .digest('hex')
    .slice(0, 16)}`;
}

/** Reads an Ed25519 public key (PEM, SPKI); anything else is `MHS.HOST.CONFIG_INVALID`. */
export function registryKeyOf(pem: string, where: string): RegistryKey {
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch (e) {
    throw new HostError(ErrorCode.HOST_CONFIG_INVALID, `registry key ${where} is not a PEM public key`, {
      path: where,
      cause: (e as Error).message,
    });
  }
  if (key.asymmetricKeyType !== 'ed25519')
    throw new HostError(ErrorCode.HOST_CONFIG_INVALID, `registry key ${where} is not an Ed25519 key`, {
      path: where,
      type: key.asymmetricKeyType,
    });
  return { id: keyFingerprint(key), key };
}

/** The bytes a record's signature covers: its RFC 8785 form without `signature`. */
export function signedBytes(record: Record<string, unknown>): Buffer {
  const { signature: _signature, ...rest } = record;
  return Buffer.from(jcs(rest), 'utf8');
}

/** Signs a record (for registry operators and tests): the record with its `signature` member. */
export function signRegistryRecord(
  record: Record<string, unknown>,
  privateKey: KeyObject,
): Record<string, unknown> & { signature: { alg: 'Ed25519'; key_id: string; value: string } } {
  const value = sign(null, signedBytes(record), privateKey).toString('base64url');
  return { ...record, signature: { alg: 'Ed25519', key_id: keyFingerprint(createPublicKey(privateKey)), value } };
}

/** Checks one record's signature against the configured keys (each tried; `key_id` is only a hint). */
export function recordTrust(record: unknown, keys: readonly RegistryKey[]): RecordTrust {
  if (!isJsonObject(record) || record.signature === undefined) return { record: 'unsigned' };
  const sig = record.signature;
  if (!isJsonObject(sig) || sig.alg !== 'Ed25519' || typeof sig.value !== 'string')
    return { record: 'invalid', reason: 'signature is not {"alg":"Ed25519","value":"<base64url>"}' };
  if (!keys.length) return { record: 'unverified' };
  const value = Buffer.from(sig.value, 'base64url');
  const bytes = signedBytes(record);
  for (const k of keys) if (verify(null, bytes, k.key, value)) return { record: 'signed', key_id: k.id };
  return { record: 'invalid', reason: 'no configured registry key verifies the signature' };
}
