// Guarantees (issue 21 item 7, wire §1): the link computed over an entry's stored canonical text equals the link
// computed by canonicalising it, for entries with nested `digest` members, integer-like keys and non-ASCII text;
// a text that is not the canonical form of its entry is never trusted (null: callers canonicalise instead).
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  GENESIS_PREV_DIGEST,
  chainLink,
  isCanonicalText,
  jcs,
  sealWithText,
  storedChainLink,
} from '../../src/core/index.js';

const json = fc.jsonValue({ maxDepth: 3 });

describe('storedChainLink', () => {
  test('equals chainLink over the canonical text of any sealed entry', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), json, { maxKeys: 6 }), (extra) => {
        const { digest: _d, prev_digest: _p, seq: _s, ...rest } = extra as Record<string, unknown>;
        const { entry, text } = sealWithText({ ...rest, seq: 3, prev_digest: GENESIS_PREV_DIGEST, kind: 'x' });
        expect(text).toBe(jcs(entry));
        expect(storedChainLink(entry, text) ?? chainLink(entry)).toBe(entry.digest);
      }),
      { numRuns: 300 },
    );
  });

  test('finds the top-level digest beside nested ones and integer-like keys', () => {
    const { entry, text } = sealWithText({
      seq: 1,
      prev_digest: GENESIS_PREV_DIGEST,
      kind: 'receipt',
      approval: { digest: 'a'.repeat(64) },
      receipt: { evidence: { digest: 'b'.repeat(64), seq: 1 }, '10': 1, '9': 2 },
      zz: 'é✓',
    });
    const link = storedChainLink(entry, text);
    // Integer-like keys make JSON.stringify differ from JCS: the text is still recognised as canonical.
    expect(isCanonicalText(entry, text)).toBe(true);
    expect(link).toBe(entry.digest);
  });

  test('a flipped byte changes the link; a non-canonical text is not trusted', () => {
    const { entry, text } = sealWithText({ seq: 0, prev_digest: GENESIS_PREV_DIGEST, kind: 'genesis', note: 'abc' });
    const flipped = text.replace('"abc"', '"abd"');
    expect(storedChainLink(JSON.parse(flipped) as Record<string, unknown>, flipped)).not.toBe(entry.digest);
    const spaced = text.replace('{', '{ ');
    expect(isCanonicalText(entry, spaced)).toBe(false);
    expect(storedChainLink(entry, spaced)).toBeNull();
    const reordered = `{"zz":1,${text.slice(1)}`; // a member out of order
    expect(storedChainLink(JSON.parse(reordered) as Record<string, unknown>, reordered)).toBeNull();
    expect(isCanonicalText(JSON.parse(reordered), reordered)).toBe(false);
  });
});
