#!/usr/bin/env node
// Runs the CLI from the compiled tree `dist/` (`npm run build`) when it was built from the sources as they are
// now, else from the TypeScript sources through tsx, in this same process (signals reach the real process).
// MHS_DEV_TSX=1 always runs the sources.
import { dirname, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { distIsCurrent } from '../scripts/dist-current.js';

if (process.env.MHS_DEV_TSX !== '1' && distIsCurrent(join(dirname(fileURLToPath(import.meta.url)), '..'))) {
  // `sim` (every stdio endpoint child) runs from its one-file bundle (src/build/sim-build.ts).
  if (process.argv.slice(2).find((a) => !a.startsWith('-')) === 'sim') await import('../dist/src/sim/sim-bundle.js');
  else await import('../dist/src/cli/main.js');
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
