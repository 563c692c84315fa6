#!/usr/bin/env node
// `npm run build` (and `prepare`): the console bundle next to its sources (src/console/dist, for `serve` run
// from the sources) and the compiled tree `dist/` (src/build/dist-build.ts). `--if-stale` (`npm start`) does
// nothing, without loading TypeScript, when `dist/` is current. An install without development dependencies has
// no esbuild: then nothing is built and the CLI runs the sources (bin/mhs-host.js).
import { dirname, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { distIsCurrent } from './dist-current.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
if (!(process.argv.includes('--if-stale') && distIsCurrent(root))) {
  const { register } = await import('tsx/esm/api');
  register();
  try {
    const { buildConsoleBundle } = await import('../src/console/console-bundle.ts');
    const { buildDist } = await import('../src/build/dist-build.ts');
    await buildConsoleBundle();
    process.stdout.write(`built ${await buildDist(root)}\n`);
  } catch (err) {
    if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !String(err.message).includes('esbuild')) throw err;
    process.stderr.write('not built: esbuild is not installed (a development dependency); the CLI runs the sources\n');
  }
}
