// The secret scanner's cheap paths (issue 21 item 2) remove exactly what the full scan removes: the one combined
// pre-check never lets a string holding a credential pattern through, and scrubbing the ledger's own copy in place
// gives the same document as the copying scrub.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scrubSecrets, scrubSecretsInPlace, scrubText, scrubTextFully } from '../../src/ledger/redaction.js';

/** Pieces of every credential shape the scanner knows, in either case, glued with ordinary text. */
const FRAGMENTS = [
  'Bearer ',
  'basic ',
  'BEARER\t',
  'password',
  'PassWd',
  'pwd',
  'passphrase',
  'secret',
  'client_secret',
  'api_key',
  'API-KEY',
  'apikey',
  'access_token',
  'auth-token',
  'token',
  '=',
  ': ',
  '"',
  "'",
  '-----BEGIN RSA PRIVATE KEY-----',
  '-----END RSA PRIVATE KEY-----',
  'AKIA',
  'sk-',
  'sk-ant-',
  'ghp_',
  'gho_',
  'xoxb-',
  'xoxp-',
  'abcdefghijklmnopqrstuvwxyz0123456789',
  'ABCDEFGHIJKLMNOP',
  ' ',
  ',',
  'ok',
];
const text = fc
  .array(fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string({ maxLength: 6 })), { maxLength: 12 })
  .map((xs) => xs.join(''));

/** Flips the case of some letters: every pattern but the token shapes ignores case. */
const recase = (s: string) =>
  fc
    .array(fc.boolean(), { minLength: s.length, maxLength: s.length })
    .map((up) => [...s].map((c, i) => (up[i] ? c.toUpperCase() : c.toLowerCase())).join(''));
const value = fc.stringMatching(/^[A-Za-z0-9._~+/=-]{8,40}$/);
/** One credential of each shape the scanner knows, between arbitrary text. */
const credential = fc.oneof(
  fc
    .tuple(fc.constantFrom('bearer', 'basic').chain(recase), fc.constantFrom(' ', '  ', '\t'), value)
    .map((xs) => xs.join('')),
  fc
    .tuple(
      fc.constantFrom('"', "'", ''),
      fc
        .constantFrom(
          'password',
          'passwd',
          'pwd',
          'passphrase',
          'secret',
          'client_secret',
          'api_key',
          'api-key',
          'apikey',
        )
        .chain(recase),
      fc.constantFrom('=', ': ', ' = ', ':'),
      value,
    )
    .map(([q, k, sep, v]) => `${q}${k}${q}${sep}${v}`),
  fc
    .constantFrom('access_token', 'access-token', 'auth_token', 'token')
    .chain(recase)
    .map((k) => `${k}=abc123`),
  fc.constant('-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----'),
  fc.stringMatching(/^[0-9A-Z]{16}$/).map((x) => `AKIA${x}`),
  fc.stringMatching(/^[A-Za-z0-9_-]{20,30}$/).map((x) => `sk-${x}`),
  fc
    .tuple(fc.constantFrom('p', 'o', 'u', 's', 'r'), fc.stringMatching(/^[A-Za-z0-9]{30,36}$/))
    .map(([k, x]) => `gh${k}_${x}`),
  fc
    .tuple(fc.constantFrom('a', 'b', 'p', 'r', 's'), fc.stringMatching(/^[A-Za-z0-9-]{10,20}$/))
    .map(([k, x]) => `xox${k}-${x}`),
);
const filler = fc.stringMatching(/^[ a-z0-9,.;]{0,12}$/);
const withCredential = fc.tuple(filler, credential, filler).map((xs) => xs.join(' '));

describe('secret scanner pre-check', () => {
  it('every credential shape passes the pre-check and is removed', () => {
    fc.assert(
      fc.property(withCredential, (s) => {
        const out = scrubText(s);
        expect(out).toBe(scrubTextFully(s));
        expect(out).not.toBe(s);
      }),
      { numRuns: 3000 },
    );
  });

  it('scrubText removes exactly what every pattern run in full removes', () => {
    fc.assert(
      fc.property(text, (s) => {
        expect(scrubText(s)).toBe(scrubTextFully(s));
      }),
      { numRuns: 3000 },
    );
    // And it does remove them (the generator reaches the patterns).
    expect(scrubText('Authorization: Bearer abcdefghijklmnop')).not.toContain('abcdefghijklmnop');
    expect(scrubText('key AKIAABCDEFGHIJKLMNOP here')).not.toContain('AKIAABCDEFGHIJKLMNOP');
  });

  it('scrubbing the ledger copy in place equals the copying scrub, a skipped member kept verbatim', () => {
    // `__proto__` aside: the copying scrub assigns members to a fresh object, which drops that one name.
    const key = fc.string().filter((k) => k !== '__proto__');
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        text,
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(
          fc.oneof(fc.constantFrom('token', 'Password', 'x-api-key', 'receipt', 'note'), key),
          tie('value'),
          {
            maxKeys: 4,
          },
        ),
      ),
    })).value;
    fc.assert(
      fc.property(
        fc.dictionary(fc.oneof(key, fc.constant('receipt')), json, { maxKeys: 5 }),
        fc.boolean(),
        (doc, skipReceipt) => {
          const skip = skipReceipt ? ['receipt'] : [];
          const expected = scrubSecrets(
            doc,
            skip.map((k) => `/${k}`),
          );
          const mine = JSON.parse(JSON.stringify(doc)) as Record<string, unknown>;
          scrubSecretsInPlace(mine, skip);
          expect(mine).toEqual(expected);
        },
      ),
      { numRuns: 1000 },
    );
  });
});
