/**
 * The simulator's startup snapshot (issue 21: 50 stdio endpoints up in ≤ 5 s): `src/cli/sim-snapshot.ts` with its
 * dependencies and the precompiled family validator bundled into one CommonJS script (Node 20's snapshot builder
 * runs one script and loads no user-land module), run by `node --build-snapshot` into a blob next to the sim
 * bundle. A child started with `node --snapshot-blob BLOB sim ...` skips loading and initialising the modules.
 * The blob only works with the node binary that built it: its version is recorded beside it
 * (scripts/sim-snapshot.js decides whether a start may use it).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PRECOMPILED_FAMILY_VALIDATOR } from '../sim/family.js';
import { SIM_SNAPSHOT_BLOB, SIM_SNAPSHOT_META, snapshotMeta } from '../../scripts/sim-snapshot.js';

const SNAPSHOT_ENTRY = 'src/cli/sim-snapshot.ts';
/** The bundled script, written next to the blob only while the snapshot is built. */
const SNAPSHOT_SCRIPT = 'src/sim/sim-snapshot.cjs';

/** Builds `outDir`'s snapshot from `root`'s sources (true); a tree without the entry gets none. */
export async function buildSimSnapshot(root: string, outDir: string): Promise<boolean> {
  if (!existsSync(join(root, SNAPSHOT_ENTRY))) return false;
  const { build } = await import('esbuild');
  const script = join(outDir, SNAPSHOT_SCRIPT);
  const simDir = join(outDir, 'src/sim');
  await build({
    stdin: {
      // Resolved in the tree's src/sim/: the validator the build wrote there (writeFamilyValidator).
      contents: [
        `import validate from './${PRECOMPILED_FAMILY_VALIDATOR}';`,
        `import { presetFamilyValidator } from ${JSON.stringify(join(root, 'src/sim/family.ts'))};`,
        `import ${JSON.stringify(join(root, SNAPSHOT_ENTRY))};`,
        'presetFamilyValidator(validate);',
      ].join('\n'),
      resolveDir: simDir,
      sourcefile: 'sim-snapshot-build-entry.js',
      loader: 'js',
    },
    outfile: script,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    tsconfig: join(root, 'tsconfig.json'),
    // A snapshot holds the paths of where it was built: the modules read where the blob is at run time.
    define: { 'import.meta.url': 'globalThis.__MHS_SIM_MODULE_URL' },
    logLevel: 'warning',
  });
  try {
    execFileSync(
      process.execPath,
      ['--no-warnings', '--snapshot-blob', join(outDir, SIM_SNAPSHOT_BLOB), '--build-snapshot', script],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
  } finally {
    rmSync(script, { force: true });
  }
  writeFileSync(join(outDir, SIM_SNAPSHOT_META), `${JSON.stringify(snapshotMeta())}\n`);
  return true;
}
