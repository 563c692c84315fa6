// Guarantees (issue 21, fast simulator start): the family validator that the build precompiles (ajv standalone
// code) accepts and refuses exactly what the validator compiled at run time does, with the same errors, on the
// bundled families and on random corruptions of them; the built tree's `bin/mhs-host.js` starts `sim` from its
// one-file bundle, which refuses an unknown family as the CLI does. (Every simulator child of the other tests
// runs that bundle: test/helpers/cli-entry.ts simEntry.)
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { describe, expect, test, vi } from 'vitest';
import { SIM_BUNDLE } from '../../src/build/sim-build.js';
import {
  BUILTIN_FAMILIES,
  builtinFamilyDir,
  FAMILY_AJV_OPTIONS,
  PRECOMPILED_FAMILY_VALIDATOR,
} from '../../src/sim/family.js';
import { FAMILY_SCHEMA } from '../../src/sim/family-schema.js';
import { BUILD_ENV } from '../helpers/cli-entry.js';

vi.setConfig({ testTimeout: 120_000 });

/** The compiled tree of this vitest process (test/global-setup.ts), made by the recipe of `npm run build`. */
const build = process.env[BUILD_ENV];

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** `doc` with the value at the `pick`-th node (pre-order) replaced by `value`. */
function corrupt(doc: Json, pick: number, value: Json): Json {
  let n = 0;
  const walk = (v: Json): Json => {
    if (n++ === pick) return value;
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(doc);
}

const verdict = (v: ValidateFunction, doc: unknown) => ({ ok: v(doc), errors: v.errors ?? null });

describe('precompiled family validator', () => {
  test.skipIf(!build)(
    'same verdicts and errors as the run-time compiled one, on the bundled families and corruptions of them',
    async () => {
      const file = join(build!, 'src/sim', PRECOMPILED_FAMILY_VALIDATOR);
      const pre = ((await import(pathToFileURL(file).href)) as { default: ValidateFunction }).default;
      const live = new Ajv2020(FAMILY_AJV_OPTIONS).compile(FAMILY_SCHEMA);
      const families = BUILTIN_FAMILIES.map(
        (f) => JSON.parse(readFileSync(join(builtinFamilyDir(), `${f}.json`), 'utf8')) as Json,
      );
      for (const doc of families) {
        expect(verdict(pre, doc)).toEqual({ ok: true, errors: null });
        expect(verdict(live, doc)).toEqual({ ok: true, errors: null });
      }
      let refused = 0;
      fc.assert(
        fc.property(fc.constantFrom(...families), fc.nat(400), fc.jsonValue({ maxDepth: 2 }), (doc, pick, value) => {
          const bad = corrupt(doc, pick, value as Json);
          const p = verdict(pre, bad);
          if (!p.ok) refused++;
          expect(p).toEqual(verdict(live, bad));
        }),
        { numRuns: 300 },
      );
      // The corruptions exercised refusals, not only documents that stayed valid.
      expect(refused).toBeGreaterThan(50);
    },
  );
});

describe('the built tree starts sim from its bundle', () => {
  test.skipIf(!build)('bin/mhs-host.js of the test build runs the sim bundle; an unknown family is refused', () => {
    expect(existsSync(join(build!, SIM_BUNDLE))).toBe(true);
    expect(readFileSync(join(build!, 'bin/mhs-host.js'), 'utf8')).toContain(SIM_BUNDLE);
    let stderr = '';
    let status: number | null = 0;
    try {
      execFileSync(process.execPath, [join(build!, 'bin/mhs-host.js'), 'sim', 'no-such-family', '--stdio'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (err) {
      ({ stderr, status } = err as { stderr: string; status: number });
    }
    expect(status).toBe(1);
    expect(stderr).toContain('error MHS.HOST.CONFIG_INVALID: unknown device family or unreadable file: no-such-family');
  });
});
