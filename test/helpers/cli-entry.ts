/**
 * How tests start this repository's TypeScript entry points (the `mhs-host` CLI, fixture servers, child
 * scripts) in child processes: from the JavaScript that `test/global-setup.ts` compiled into `MHS_TEST_BUILD`,
 * or with `node --import tsx <file>.ts` (cwd: the repository root) when there is no build or `MHS_TEST_TSX=1`.
 * Imports nothing from vitest: fixture children import it too.
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { simStartArgs } from '../../scripts/sim-snapshot.js';

/** Repository root (cwd of spawned CLIs). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Environment variable naming the compiled build dir (set by the global setup). */
export const BUILD_ENV = 'MHS_TEST_BUILD';

/** Set to `1` to run children through tsx instead of the compiled build (debugging). */
export const TSX_ENV = 'MHS_TEST_TSX';

/** Node arguments that run `file`, a `.ts` path relative to the repository root; append the script's own arguments. */
export function entryArgs(file: string): string[] {
  const build = process.env[TSX_ENV] === '1' ? undefined : process.env[BUILD_ENV];
  return build ? [join(build, file.replace(/\.ts$/, '.js'))] : ['--import', 'tsx', file];
}

/** Command and arguments that start the `mhs-host` CLI; append the CLI's arguments. */
export function cliEntry(): { command: string; args: string[] } {
  return { command: process.execPath, args: entryArgs('src/cli/main.ts') };
}

/**
 * Command and arguments that start `mhs-host sim`; append `sim` and its arguments. From the compiled build: its
 * startup snapshot when this node binary built it, else the one-file simulator bundle (scripts/sim-snapshot.js).
 */
export function simEntry(): { command: string; args: string[] } {
  const build = process.env[TSX_ENV] === '1' ? undefined : process.env[BUILD_ENV];
  return build ? { command: process.execPath, args: simStartArgs(build) } : cliEntry();
}
