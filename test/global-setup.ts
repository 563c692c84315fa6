/**
 * Vitest global setup: compiles the TypeScript that test child processes run (the CLI, simulators, `serve`,
 * fixture children) once per `vitest` process into `.test-build/<pid>/` with the recipe of `npm run build`
 * ({@link buildTree}), so a spawned child starts plain JavaScript instead of compiling the CLI with tsx at every
 * spawn. The build dir is announced to workers (and the children they spawn) as `MHS_TEST_BUILD`, read by
 * `test/helpers/cli-entry.ts`, and removed on teardown. `MHS_TEST_TSX=1` skips the build: children run with tsx.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { buildTree } from '../src/build/dist-build.js';
import { BUILD_ENV, REPO_ROOT, TSX_ENV } from './helpers/cli-entry.js';

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
    // The same recipe as `npm run build` (src/build/dist-build.ts), with test/ for fixture children and the
    // helpers they import.
    await buildTree({ root: REPO_ROOT, outDir: out, dirs: ['src', 'machines', 'test'] });
  } catch (err) {
    teardown();
    throw err;
  }
  process.env[BUILD_ENV] = out;
  return teardown;
}
