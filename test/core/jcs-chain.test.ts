// Guarantees: JCS matches RFC 8785's published vectors, and H()/chainLink() reproduce golden digests
// that were computed once by an independent route (Python json.dumps(sort_keys) + hashlib, recorded here).
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  H,
  jcs,
  chainLink,
  seal,
  sealWithText,
  verifyChain,
  GENESIS_PREV_DIGEST,
  type ChainEntry,
} from '../../src/core/index.js';

describe('JCS (RFC 8785 vectors)', () => {
  it('sorts properties by UTF-16 code units (RFC 8785 §3.2.3)', () => {
    const input = JSON.parse(
      '{"\\u20ac":"Euro Sign","\\r":"Carriage Return","\\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\\ud83d\\ude00":"Emoji: Grinning Face","\\u0080":"Control\\u007f","\\u00f6":"Latin Small Letter O With Diaeresis"}',
    );
    expect(jcs(input)).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control\u007f","\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });
  it('serialises the §3.2.2 example', () => {
    const input = JSON.parse(
      '{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/","literals":[null,true,false]}',
    );
    expect(jcs(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });
  it.each([
    [0, '0'],
    [-0, '0'],
    [5e-324, '5e-324'],
    [1.7976931348623157e308, '1.7976931348623157e+308'],
    [9007199254740992, '9007199254740992'],
    [1e21, '1e+21'],
    [1e-7, '1e-7'],
    [0.000001, '0.000001'],
  ])('number %d → %s (Appendix B)', (n, text) => {
    expect(jcs(n)).toBe(text);
  });
  it('is idempotent on any JSON value', () => {
    fc.assert(fc.property(fc.jsonValue(), (v) => jcs(JSON.parse(jcs(v))) === jcs(v)));
  });
});

const GOLDEN: ChainEntry[] = [
  {
    seq: 0,
    prev_digest: GENESIS_PREV_DIGEST,
    ts: '2026-01-01T00:00:00.000Z',
    kind: 'genesis',
    body: { host: 'mhs-host' },
    digest: '881582b8e97a5f9125fece55d4a0745611bb974b08fbad89dbbbb21988312ae8',
  },
  {
    seq: 1,
    prev_digest: '881582b8e97a5f9125fece55d4a0745611bb974b08fbad89dbbbb21988312ae8',
    ts: '2026-01-01T00:00:01.000Z',
    kind: 'receipt',
    body: { status: 'completed', qty: { value: 300, unit: 'mm' } },
    digest: '84df6190b0fedc5e08e24a816df7dba336787d831fef9bd3c8934da67b02b586',
  },
  {
    seq: 2,
    prev_digest: '84df6190b0fedc5e08e24a816df7dba336787d831fef9bd3c8934da67b02b586',
    ts: '2026-01-01T00:00:02.000Z',
    kind: 'session.close',
    body: { session_id: 'ses_X', note: 'température' },
    digest: '3a7e83d223cdbcbe4de46249f0df6833982e6a28b8e30423c187e28b3870e47f',
  },
];

describe('H() and the chain link (wire contract §1)', () => {
  it('H matches the golden input digest', () => {
    expect(H({ ticks: 3 })).toBe('31db4d7397f81d62f3b0c48d9b1a1092abe1f3342fe8b4fd4024516f581abec4');
  });
  it('chainLink reproduces every golden digest', () => {
    for (const e of GOLDEN) expect(chainLink(e)).toBe(e.digest);
    expect(verifyChain(GOLDEN)).toEqual({ ok: true, count: 3, head_digest: GOLDEN[2]!.digest });
  });
  it('names the first broken link', () => {
    const tampered = GOLDEN.map((e) => ({ ...e }));
    tampered[1] = { ...tampered[1]!, body: { status: 'failed' } };
    expect(verifyChain(tampered)).toMatchObject({ ok: false, broken_at: 1, reason: 'digest' });
    const reordered = [GOLDEN[0]!, GOLDEN[2]!];
    expect(verifyChain(reordered)).toMatchObject({ ok: false, broken_at: 2 });
  });
});

describe('sealWithText (the ledger writer canonicalises each entry once)', () => {
  it('gives exactly seal() and the JCS text of the sealed entry, for any JSON entry (property)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 12 }), fc.string(), (extra, prev) => {
        const { digest: _d, ...body } = extra;
        const entry = { ...body, seq: 1, prev_digest: prev };
        const { entry: sealed, text } = sealWithText(entry);
        expect(sealed).toEqual(seal(entry));
        expect(text).toBe(jcs(sealed));
        expect(sealed.digest).toBe(chainLink(sealed));
      }),
      { numRuns: 300 },
    );
  });
});
