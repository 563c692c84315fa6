/**
 * The one recipe that compiles this repository's TypeScript to plain JavaScript: `npm run build` (`dist/`) and the
 * test build (`test/global-setup.ts`, `.test-build/<pid>/`) both call {@link buildTree}. One file per source file
 * (esbuild, bundle=false) in the repository's layout, so relative imports and `import.meta.url` paths resolve as
 * in the sources; the files the code reads next to itself are copied, the console bundle is built into the tree,
 * and the folders read relative to the repository root are linked.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DIST_DIR, DIST_STAMP, distIsCurrent, inputFingerprint } from '../../scripts/dist-current.js';
import { buildConsoleBundle } from '../console/console-bundle.js';
import { SIM_BUNDLE, bundleSim, writeFamilyValidator } from './sim-build.js';
import { buildSimSnapshot } from './sim-snapshot.js';

/** Repository root (this file is `src/build/dist-build.ts`). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Read next to the code that uses them (`import.meta.url`): device families, console assets. */
const ASSET_DIRS = ['src/sim/devices', 'src/console/static'];
/** Read relative to the repository root (`REPO_ROOT` of src/openwop/schemas.ts is the tree's root; src/build imports scripts/). */
const ROOT_DIRS = ['vendor', 'workflows', 'prompts', 'scripts'];

export interface TreeBuild {
  root: string;
  outDir: string;
  /** Folders under `root` whose `.ts` files are compiled (`*.test.ts` and `.d.ts` skipped). */
  dirs: string[];
  /** Folders under `root` left out (e.g. this build code, which only runs from the sources). */
  skip?: string[];
}

/** Every `.ts` file under `dir` (recursive), skipping tests, declarations and the `skip` folders. */
function sources(root: string, dir: string, skip: string[]): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.endsWith('.d.ts'))
    .filter((f) => !skip.some((s) => f.startsWith(`${s}/`)))
    .map((f) => join(root, f));
}

/**
 * Compiles `dirs` of `root` into `outDir` (created; left as is on failure, for the caller to remove), with the
 * assets, the console bundle, links to the root folders, and `bin/mhs-host.js` starting `src/cli/main.js` of the
 * tree (`mhs-host demo` starts its simulators through the bin next to its `src/`, so they run from the same tree).
 */
export async function buildTree(o: TreeBuild): Promise<void> {
  // esbuild is a development dependency: loaded only when building.
  const { build } = await import('esbuild');
  mkdirSync(o.outDir, { recursive: true });
  await build({
    entryPoints: o.dirs.flatMap((d) => sources(o.root, d, o.skip ?? [])),
    outdir: o.outDir,
    outbase: o.root,
    bundle: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    tsconfig: join(o.root, 'tsconfig.json'),
    logLevel: 'warning',
  });
  for (const dir of ASSET_DIRS) cpSync(join(o.root, dir), join(o.outDir, dir), { recursive: true });
  if (existsSync(join(o.outDir, 'src/sim/family.js'))) writeFamilyValidator(o.outDir);
  // The tree has no `ui/` sources to build the console from: its `serve` serves this bundle.
  await buildConsoleBundle(join(o.outDir, 'src/console/dist/console.js'), join(o.root, 'src/console/ui'));
  for (const dir of ROOT_DIRS) symlinkSync(relative(o.outDir, join(o.root, dir)), join(o.outDir, dir), 'dir');
  mkdirSync(join(o.outDir, 'bin'), { recursive: true });
  const simBundled = await bundleSim(o.root, o.outDir);
  if (simBundled) await buildSimSnapshot(o.root, o.outDir);
  writeFileSync(
    join(o.outDir, 'bin/mhs-host.js'),
    simBundled
      ? `const sim = process.argv.slice(2).find((a) => !a.startsWith('-')) === 'sim';\nawait import(sim ? '../${SIM_BUNDLE}' : '../src/cli/main.js');\n`
      : "await import('../src/cli/main.js');\n",
  );
}

/**
 * `npm run build`: `root/dist/`, built beside it and swapped in, so a process starting meanwhile finds the old
 * tree, none (and runs the sources), or the new one, never half of one. Its stamp is the inputs' fingerprint
 * taken before compiling, so an edit made during the build leaves it stale (scripts/dist-current.js).
 */
export async function buildDist(root: string = REPO_ROOT): Promise<string> {
  const inputs = inputFingerprint(root);
  const dist = join(root, DIST_DIR);
  const tmp = join(root, `.${DIST_DIR}-${process.pid}.tmp`);
  const old = join(root, `.${DIST_DIR}-${process.pid}.old`);
  rmSync(tmp, { recursive: true, force: true });
  try {
    await buildTree({ root, outDir: tmp, dirs: ['src', 'machines'], skip: ['src/build'] });
    writeFileSync(join(tmp, DIST_STAMP), `${JSON.stringify({ inputs })}\n`);
    if (existsSync(dist)) renameSync(dist, old);
    try {
      renameSync(tmp, dist);
    } catch (err) {
      // Another build swapped its tree in meanwhile: fine when it is of the same inputs.
      if (!existsSync(dist) || !distIsCurrent(root)) throw err;
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    rmSync(old, { recursive: true, force: true });
  }
  return dist;
}
