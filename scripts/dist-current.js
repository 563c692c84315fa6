// Whether `dist/` (npm run build) is current: its stamp records the newest modification time among the build's
// inputs when it was built, and any change to them since (an edit, a new or removed file, a checkout) moves that
// time. Plain JavaScript: bin/mhs-host.js reads it before anything can compile TypeScript.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The build's inputs, relative to the repository root. */
export const DIST_INPUTS = ['src', 'machines', 'package.json', 'tsconfig.json'];
/** Outputs written inside the inputs (the console bundle), not inputs themselves. */
const SKIP = new Set([join('src', 'console', 'dist')]);
export const DIST_DIR = 'dist';
export const DIST_STAMP = '.build-stamp.json';

/** The newest modification time (ms) of the build's inputs under `root`, directories included. */
export function newestInput(root) {
  let newest = 0;
  const visit = (rel) => {
    if (SKIP.has(rel)) return;
    const st = statSync(join(root, rel), { throwIfNoEntry: false });
    if (!st) return;
    newest = Math.max(newest, st.mtimeMs);
    if (st.isDirectory()) for (const name of readdirSync(join(root, rel))) visit(join(rel, name));
  };
  for (const rel of DIST_INPUTS) visit(rel);
  return newest;
}

/** Whether `root`'s `dist/` was built from the inputs as they are now. */
export function distIsCurrent(root) {
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(join(root, DIST_DIR, DIST_STAMP), 'utf8'));
  } catch {
    return false;
  }
  return typeof stamp?.newest_input_ms === 'number' && stamp.newest_input_ms === newestInput(root);
}
