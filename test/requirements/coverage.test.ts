// Guarantees: every MHS-009 HOST requirement is either cited in the name of at least one test or suite
// (`HOST-0xx: ...`; comments do not count) or listed in NOT_EXERCISED with its reason, and no listed id is in
// fact cited (so the list cannot go stale silently).
import { describe, expect, it } from 'vitest';
import { NOT_EXERCISED } from '../../src/conformance/host-requirements.js';
import { citingFiles } from './cited-tests.js';
import { HOST_REQUIREMENTS } from './host-requirements.js';

/** Requirements no test exercises, with the reason (src/conformance, shared with the conformance report). */
const KNOWN_GAPS = NOT_EXERCISED;

describe('HOST requirement coverage', () => {
  const cited = new Set(citingFiles().keys());

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
