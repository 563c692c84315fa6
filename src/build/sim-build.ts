/**
 * What the compiled tree adds for fast simulator start (issue 21: 50 stdio endpoints up in ≤ 5 s): the device
 * family validator precompiled as ajv standalone code, and the `sim` CLI with its dependencies bundled into one
 * file, so a stdio endpoint child neither compiles the family schema nor resolves and reads some 400 modules.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import standalone from 'ajv/dist/standalone/index.js';
import { FAMILY_AJV_OPTIONS, PRECOMPILED_FAMILY_VALIDATOR } from '../sim/family.js';
import { FAMILY_SCHEMA } from '../sim/family-schema.js';

/** Entry of the simulator bundle, relative to the tree's root. */
const SIM_ENTRY = 'src/cli/sim-main.ts';
// The bundle, in src/sim/ of the compiled tree: family.ts finds `devices/` and its validator next to itself.
import { SIM_BUNDLE } from '../../scripts/sim-snapshot.js';

export { SIM_BUNDLE };

/** ESM modules in the bundle that call `require` (CommonJS dependencies such as ajv) get Node's. */
const REQUIRE_SHIM =
  "import { createRequire as __mhsCreateRequire } from 'node:module';\nconst require = __mhsCreateRequire(import.meta.url);\n";

/** Writes `src/sim/family-validator.js` of `outDir`: the family schema compiled by ajv with the runtime options. */
export function writeFamilyValidator(outDir: string): void {
  // CommonJS: family.ts loads it synchronously (`require`), and the snapshot build bundles it.
  const ajv = new Ajv2020({ ...FAMILY_AJV_OPTIONS, code: { source: true, esm: false } });
  const code = standalone.default(ajv, ajv.compile(FAMILY_SCHEMA));
  writeFileSync(join(outDir, 'src/sim', PRECOMPILED_FAMILY_VALIDATOR), code);
}

/** Bundles `root`'s `sim` CLI into `outDir` (true); a tree without the entry (small test repositories) gets none. */
export async function bundleSim(root: string, outDir: string): Promise<boolean> {
  if (!existsSync(join(root, SIM_ENTRY))) return false;
  const { build } = await import('esbuild');
  await build({
    entryPoints: [join(root, SIM_ENTRY)],
    outfile: join(outDir, SIM_BUNDLE),
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    tsconfig: join(root, 'tsconfig.json'),
    banner: { js: REQUIRE_SHIM },
    logLevel: 'warning',
  });
  return true;
}
