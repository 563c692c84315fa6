// Guarantees: every MHS-009 HOST requirement is either cited in the name of at least one test or suite
// (`HOST-0xx: ...`; comments do not count) or listed in NOT_EXERCISED with its reason, and no listed id is in
// fact cited (so the list cannot go stale silently).
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NOT_EXERCISED } from '../../src/conformance/host-requirements.js';
import { HOST_REQUIREMENTS } from './host-requirements.js';

/** Requirements no test exercises, with the reason (src/conformance, shared with the conformance report). */
const KNOWN_GAPS = NOT_EXERCISED;

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === 'requirements' ? [] : testFiles(p);
    return name.endsWith('.ts') ? [p] : [];
  });
}

describe('HOST requirement coverage', () => {
  const cited = new Set<string>();
  // Only test and suite names count (a comment citing an id exercises nothing; the conformance report reads names
  // too). Names cite one id (`HOST-091`) or several (`HOST-013/065`).
  const title =
    /\b(?:it|test|describe)(?:\.(?:each|skipIf|runIf|only|concurrent|sequential)(?:\([^)]*\))?)*\(\s*(['"`])((?:(?!\1)[\s\S])*)\1/g;
  for (const f of testFiles('test'))
    for (const t of readFileSync(f, 'utf8').matchAll(title))
      for (const m of t[2]!.matchAll(/HOST-(0\d\d(?:\/0\d\d)*)/g))
        for (const n of m[1]!.split('/')) cited.add(`HOST-${n}`);

  it('every requirement is cited by a test or listed as a known gap', () => {
    const missing = Object.keys(HOST_REQUIREMENTS).filter((id) => !cited.has(id) && !(id in KNOWN_GAPS));
    expect(missing).toEqual([]);
  });
  it('no known gap is actually cited (keep the list honest)', () => {
    expect(Object.keys(KNOWN_GAPS).filter((id) => cited.has(id))).toEqual([]);
  });
  it('tests cite only real requirement ids', () => {
    expect([...cited].filter((id) => !(id in HOST_REQUIREMENTS))).toEqual([]);
  });
});
