import { jcs, sha256Hex } from './jcs.js';

/** `prev_digest` of every genesis entry (wire contract §1). */
export const GENESIS_PREV_DIGEST = '0'.repeat(64);

/** A hash-chained entry: the host ledger and endpoint evidence share this shape. */
export interface ChainEntry {
  seq: number;
  prev_digest: string;
  digest: string;
  [key: string]: unknown;
}

/**
 * Chain link of the wire contract §1:
 * `sha256(utf8(JCS(entry without "digest")) || utf8(prev_digest))`, lowercase hex.
 */
export function chainLink(entry: Record<string, unknown>): string {
  const { digest: _omit, ...rest } = entry;
  const prev = rest['prev_digest'];
  if (typeof prev !== 'string') throw new TypeError('entry has no prev_digest');
  return sha256Hex(jcs(rest) + prev);
}

function keysSorted(v: unknown): boolean {
  if (Array.isArray(v)) {
    for (const x of v) if (!keysSorted(x)) return false;
    return true;
  }
  if (v === null || typeof v !== 'object') return true;
  const keys = Object.keys(v);
  for (let i = 1; i < keys.length; i++) if (!((keys[i - 1] as string) < (keys[i] as string))) return false;
  for (const k of keys) if (!keysSorted((v as Record<string, unknown>)[k])) return false;
  return true;
}

/**
 * Whether `text` is `JCS(value)` (RFC 8785), for a `value` parsed from `text`: JSON.stringify keeps the parsed
 * member order and serialises numbers and strings as JCS does, so with every object's keys sorted (UTF-16 code
 * units) the texts agree. Falls back to canonicalising when they differ (e.g. integer-like keys, which V8 reorders).
 */
export function isCanonicalText(value: unknown, text: string): boolean {
  if (JSON.stringify(value) === text && keysSorted(value)) return true;
  return jcs(value) === text;
}

/**
 * The §1 link of an entry stored as its canonical text `line` (`JCS(entry)`, digest included), computed over the
 * stored bytes: the text without the top-level `digest` member is exactly `JCS(entry without digest)`, so nothing is
 * re-canonicalised. Null when `line` is not canonical or the member is not found once (callers use
 * {@link chainLink}); the verdict is the same either way.
 */
export function storedChainLink(entry: Record<string, unknown>, line: string): string | null {
  const digest = entry['digest'];
  const prev = entry['prev_digest'];
  if (typeof digest !== 'string' || typeof prev !== 'string' || !isCanonicalText(entry, line)) return null;
  return linkOverText(line, digest, prev);
}

/** Whether `at` lies at nesting depth 1 of the JSON text `text`, outside any string (a top-level member starts there). */
function topLevelAt(text: string, at: number): boolean {
  let depth = 0;
  for (let i = 0; i < at; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string: skip to its closing quote; one still open at `at` means `at` is inside it.
      for (i++; ; i++) {
        if (i >= at) return false;
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return depth === 1;
}

/**
 * sha256 of `line` without its top-level `"digest":"<digest>"` member, || `prev` (wire §1); null when the first such
 * member is not a whole member of the top-level object (callers then parse and use {@link chainLink}). Equal to
 * `digest` only if those bytes are what was hashed, so the line is the hashed entry with its digest member added
 * at the top level: for a line sealed by the host (`sealWithText`, JCS), `JCS(entry)`, proven without parsing it.
 */
export function linkOverText(line: string, digest: string, prev: string): string | null {
  // No format check of `digest` here: the link is hex, so it can only equal a well-formed digest.
  const member = `"digest":"${digest}"`;
  const at = line.indexOf(member);
  if (at < 1) return null;
  const end = at + member.length;
  const before = line.charCodeAt(at - 1);
  const after = line.charCodeAt(end);
  // A member boundary: after `{` or `,`, before `,` or `}` (a member moved into a nested object is not one).
  if ((before !== 0x2c && before !== 0x7b) || (after !== 0x2c && after !== 0x7d) || !topLevelAt(line, at)) return null;
  const stripped =
    before === 0x2c
      ? line.slice(0, at - 1) + line.slice(end)
      : after === 0x2c
        ? line.slice(0, at) + line.slice(end + 1)
        : line.slice(0, at) + line.slice(end);
  return sha256Hex(stripped + prev);
}

/** Returns `entry` with its `digest` computed. */
export function seal<T extends Record<string, unknown>>(entry: T): T & { digest: string } {
  return { ...entry, digest: chainLink(entry) };
}

/**
 * {@link seal} that also returns the JCS text of the sealed entry, for storage. Each top-level value is
 * canonicalised once and the two texts are assembled from those parts (JCS orders members by key and adds
 * no whitespace), so the writer does not canonicalise every entry twice.
 */
export function sealWithText<T extends Record<string, unknown>>(
  entry: T,
): { entry: T & { digest: string }; text: string } {
  const prev = entry['prev_digest'];
  if (typeof prev !== 'string') throw new TypeError('entry has no prev_digest');
  const keys = Object.keys(entry)
    .filter((k) => k !== 'digest' && entry[k] !== undefined)
    .sort();
  const parts = keys.map((k) => `${JSON.stringify(k)}:${jcs(entry[k])}`);
  const digest = sha256Hex(`{${parts.join(',')}}${prev}`);
  let at = keys.findIndex((k) => k > 'digest');
  if (at < 0) at = keys.length;
  parts.splice(at, 0, `"digest":${JSON.stringify(digest)}`);
  return { entry: { ...entry, digest }, text: `{${parts.join(',')}}` };
}

/** Result of recomputing a chain: ok, or the first entry whose link does not hold. */
export type ChainCheck =
  | { ok: true; count: number; head_digest: string | null }
  | { ok: false; broken_at: number; reason: 'digest' | 'prev_digest' | 'seq' | 'genesis' };

/**
 * Recomputes every link. `anchor` is the expected `prev_digest` of the first entry
 * (64 zeros for a chain that starts at genesis, the pruned head for a checkpointed one).
 */
export function verifyChain(entries: readonly ChainEntry[], anchor: string = GENESIS_PREV_DIGEST): ChainCheck {
  let prev = anchor;
  let expectedSeq: number | null = null;
  for (const e of entries) {
    if (expectedSeq !== null && e.seq !== expectedSeq) return { ok: false, broken_at: e.seq, reason: 'seq' };
    if (e.prev_digest !== prev) {
      return { ok: false, broken_at: e.seq, reason: expectedSeq === null ? 'genesis' : 'prev_digest' };
    }
    if (chainLink(e) !== e.digest) return { ok: false, broken_at: e.seq, reason: 'digest' };
    prev = e.digest;
    expectedSeq = e.seq + 1;
  }
  return { ok: true, count: entries.length, head_digest: entries.length ? prev : null };
}
