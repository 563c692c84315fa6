import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { ErrorCode, HostError, jcs } from '../core/index.js';
import { brk } from './package-checks.js';
import { LEDGER_FILE } from './package-format.js';
import type { PackageBreak } from './package-format.js';

/**
 * A ledger anchor (issue 20, HOST-055): the head of the host ledger as a reviewer keeps it outside any package,
 * optionally signed with an operator's Ed25519 key. Anyone holding the package can re-seal its chains from
 * scratch; a re-sealed package no longer holds the anchored entry, so it fails against an anchor taken earlier.
 */
export const ANCHOR_FORMAT = 'mhs-host.ledger-anchor';

export interface LedgerAnchor {
  format: typeof ANCHOR_FORMAT;
  seq: number;
  digest: string;
  /** When the anchor was taken. */
  ts: string;
  /**
   * Present on the anchor `ledger export --anchor-out` writes: the package's `manifest_sha256`. The package must
   * then be exactly that one (its head is the anchored entry; nothing was appended or re-sealed since).
   */
  manifest_sha256?: string;
  /** Ed25519 over JCS of the anchor without `signature` (base64), with the signer's SPKI public key (PEM). */
  signature?: { alg: 'Ed25519'; public_key: string; value: string };
}

type Unsigned = Omit<LedgerAnchor, 'signature'>;

function keyError(what: string, err: unknown): HostError {
  return new HostError(
    ErrorCode.HOST_CONFIG_INVALID,
    `${what} is not a usable Ed25519 key: ${err instanceof Error ? err.message : String(err)}`,
    {},
    {
      remediation:
        'Pass a PEM file, e.g. one written by `mhs-host ledger keygen` or `openssl genpkey -algorithm ed25519`.',
    },
  );
}

function ed25519(key: KeyObject, what: string): KeyObject {
  if (key.asymmetricKeyType !== 'ed25519') throw keyError(what, new Error(`key type ${String(key.asymmetricKeyType)}`));
  return key;
}

/** An anchor of the entry `{seq, digest}`, signed when `privateKeyPem` is given. */
export function makeAnchor(
  head: { seq: number; digest: string },
  ts: string,
  privateKeyPem?: string,
  manifestSha256?: string,
): LedgerAnchor {
  const body: Unsigned = {
    format: ANCHOR_FORMAT,
    seq: head.seq,
    digest: head.digest,
    ts,
    ...(manifestSha256 !== undefined ? { manifest_sha256: manifestSha256 } : {}),
  };
  if (privateKeyPem === undefined) return body;
  let key: KeyObject;
  try {
    key = ed25519(createPrivateKey(privateKeyPem), 'the signing key');
  } catch (err) {
    throw err instanceof HostError ? err : keyError('the signing key', err);
  }
  const public_key = createPublicKey(key).export({ type: 'spki', format: 'pem' }).toString();
  const value = sign(null, Buffer.from(jcs(body), 'utf8'), key).toString('base64');
  return { ...body, signature: { alg: 'Ed25519', public_key, value } };
}

/** Parses an anchor file's text; `MHS.HOST.CONFIG_INVALID` when it is not one. */
export function parseAnchor(text: string): LedgerAnchor {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new HostError(ErrorCode.HOST_CONFIG_INVALID, `the anchor is not JSON: ${(err as Error).message}`, {});
  }
  const a = v as Partial<LedgerAnchor> | null;
  if (
    !a ||
    a.format !== ANCHOR_FORMAT ||
    !Number.isInteger(a.seq) ||
    typeof a.digest !== 'string' ||
    !/^[0-9a-f]{64}$/.test(a.digest)
  )
    throw new HostError(ErrorCode.HOST_CONFIG_INVALID, `the anchor is not an ${ANCHOR_FORMAT} document`, {});
  return a as LedgerAnchor;
}

/** What {@link checkAnchor} found about the signature. */
export type AnchorSignature = 'absent' | 'valid' | 'valid_pinned';

/**
 * Checks a package's host ledger against an anchor: the anchored seq must be in the package with the anchored
 * digest (an anchor past the package's head means entries were cut off). A signature must verify; it is
 * `valid_pinned` only against the reviewer's own copy of the public key (`publicKeyPem`), since a forger can sign
 * with a key of their own.
 */
export function checkAnchor(
  anchor: LedgerAnchor,
  ledger: readonly Record<string, unknown>[],
  publicKeyPem?: string,
  manifestSha256?: unknown,
): { problem: PackageBreak | null; signature: AnchorSignature } {
  let signature: AnchorSignature = 'absent';
  if (anchor.signature || publicKeyPem !== undefined) {
    const { signature: sig, ...body } = anchor;
    if (!sig) return { problem: brk('anchor', anchor.seq, 'anchor_unsigned', 'a public key was given'), signature };
    let key: KeyObject;
    try {
      key = ed25519(createPublicKey(publicKeyPem ?? sig.public_key), 'the public key');
    } catch (err) {
      throw err instanceof HostError ? err : keyError('the public key', err);
    }
    const ok =
      sig.alg === 'Ed25519' && verify(null, Buffer.from(jcs(body), 'utf8'), key, Buffer.from(sig.value, 'base64'));
    if (!ok)
      return { problem: brk('anchor', anchor.seq, 'anchor_signature', 'the signature does not verify'), signature };
    signature = publicKeyPem !== undefined ? 'valid_pinned' : 'valid';
  }
  const first = ledger[0];
  const last = ledger[ledger.length - 1];
  if (anchor.manifest_sha256 !== undefined && anchor.manifest_sha256 !== manifestSha256)
    return {
      problem: brk('manifest.json', anchor.seq, 'anchor_mismatch', 'this is not the package the anchor was taken of'),
      signature,
    };
  const at = ledger.find((e) => e['seq'] === anchor.seq);
  if (at) {
    if (at['digest'] === anchor.digest) return { problem: null, signature };
    return {
      problem: brk(LEDGER_FILE, anchor.seq, 'anchor_mismatch', `anchored digest ${anchor.digest} differs`),
      signature,
    };
  }
  if (last && typeof last['seq'] === 'number' && anchor.seq > last['seq'])
    return {
      problem: brk(
        LEDGER_FILE,
        anchor.seq,
        'anchor_ahead',
        `the package ends at seq ${last['seq']}: entries were cut off`,
      ),
      signature,
    };
  const sealed =
    first?.['kind'] === 'checkpoint' ? (first['sealed'] as { seq?: unknown; digest?: unknown }) : undefined;
  if (sealed && sealed.seq === anchor.seq && sealed.digest === anchor.digest) return { problem: null, signature };
  return {
    problem: brk(LEDGER_FILE, anchor.seq, 'anchor_not_in_package', 'the anchored entry was pruned from this package'),
    signature,
  };
}
