// Whether `dist/` (npm run build) is current: its stamp holds a fingerprint of the build's inputs (every file and
// folder with its modification time and size) taken when it was built; any change since (an edit, a new or removed
// file, a checkout) changes it. Plain JavaScript: bin/mhs-host.js reads it before anything can compile TypeScript.
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The build's inputs, relative to the repository root. */
export const DIST_INPUTS = ['src', 'machines', 'package.json', 'tsconfig.json'];
/** Outputs written inside the inputs (the console bundle), not inputs themselves. */
const SKIP = new Set([join('src', 'console', 'dist')]);
export const DIST_DIR = 'dist';
export const DIST_STAMP = '.build-stamp.json';

/** The fingerprint of the build's inputs under `root`. */
export function inputFingerprint(root) {
  const hash = createHash('sha256');
  const visit = (rel) => {
    if (SKIP.has(rel)) return;
    const st = statSync(join(root, rel), { throwIfNoEntry: false });
    if (!st) return;
    hash.update(`${rel}\0${st.mtimeMs}\0${st.isDirectory() ? 'dir' : st.size}\n`);
    if (st.isDirectory()) for (const name of readdirSync(join(root, rel)).sort()) visit(join(rel, name));
  };
  for (const rel of DIST_INPUTS) visit(rel);
  return hash.digest('hex');
}

/** Whether `root`'s `dist/` was built from the inputs as they are now. */
export function distIsCurrent(root) {
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(join(root, DIST_DIR, DIST_STAMP), 'utf8'));
  } catch {
    return false;
  }
  return typeof stamp?.inputs === 'string' && stamp.inputs === inputFingerprint(root);
}
