/**
 * Vitest global setup: compiles the TypeScript that test child processes run (the CLI, simulators, `serve`,
 * fixture children) once per `vitest` process with esbuild into `.test-build/<pid>/`, so a spawned child starts
 * plain JavaScript instead of compiling the CLI with tsx at every spawn. One file per source file
 * (bundle=false) in the repository's layout: relative imports and `import.meta.url` paths resolve as in the
 * sources. The build dir is announced to workers (and the children they spawn) as `MHS_TEST_BUILD`, read by
 * `test/helpers/cli-entry.ts`, and removed on teardown. `MHS_TEST_TSX=1` skips the build: children run with tsx.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, rmdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { buildConsoleBundle } from '../src/console/console-bundle.js';
import { BUILD_ENV, REPO_ROOT, TSX_ENV } from './helpers/cli-entry.js';

/** Every `.ts` file under `dir` (recursive), skipping `*.test.ts`. */
function sources(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.endsWith('.d.ts'))
    .map((f) => join(dir, f));
}

/** Whether process `pid` exists (signal 0 only checks). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export default async function setup(): Promise<(() => void) | undefined> {
  if (process.env[TSX_ENV] === '1') return undefined;
  const root = join(REPO_ROOT, '.test-build');
  const out = join(root, String(process.pid));
  // Builds of vitest processes that died without their teardown (SIGKILL).
  for (const d of existsSync(root) ? readdirSync(root) : [])
    if (/^\d+$/.test(d) && !alive(Number(d))) rmSync(join(root, d), { recursive: true, force: true });
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const teardown = () => {
    rmSync(out, { recursive: true, force: true });
    // Left while another vitest process (e.g. a nested run) still has its build there.
    try {
      rmdirSync(root);
    } catch {
      /* not empty */
    }
  };
  try {
    await build({
      // src and machines for the CLI; test/ for fixture children and the helpers they import.
      entryPoints: ['src', 'machines', 'test'].flatMap((d) => sources(join(REPO_ROOT, d))),
      outdir: out,
      outbase: REPO_ROOT,
      bundle: false,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      tsconfig: join(REPO_ROOT, 'tsconfig.json'),
      logLevel: 'warning',
    });
    // Files the sources read next to themselves (import.meta.url): device families, console assets.
    for (const dir of ['src/sim/devices', 'src/console/static'])
      cpSync(join(REPO_ROOT, dir), join(out, dir), { recursive: true });
    // The console's Preact bundle, which the built `serve` serves (it has no `ui/` sources to build from).
    await buildConsoleBundle(join(out, 'src/console/dist/console.js'));
    // Read relative to the repository root (`REPO_ROOT` of src/openwop/schemas.ts is the build dir).
    for (const dir of ['vendor', 'workflows', 'prompts']) symlinkSync(join(REPO_ROOT, dir), join(out, dir), 'dir');
    // `mhs-host demo` starts its simulators through bin/mhs-host.js next to src/.
    mkdirSync(join(out, 'bin'));
    writeFileSync(join(out, 'bin/mhs-host.js'), "await import('../src/cli/main.js');\n");
  } catch (err) {
    teardown();
    throw err;
  }
  process.env[BUILD_ENV] = out;
  return teardown;
}
