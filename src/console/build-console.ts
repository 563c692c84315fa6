// `npm run build:console`, also run by `prepare` so that a fresh `npm ci` clone (and a packed tarball) has the
// bundle before anything serves it. `serve` rebuilds it anyway when the sources are newer (console-bundle.ts).
import { CONSOLE_BUNDLE, buildConsoleBundle } from './console-bundle.js';

try {
  await buildConsoleBundle();
  process.stdout.write(`console bundle: ${CONSOLE_BUNDLE}\n`);
} catch (err) {
  // An install without development dependencies has no esbuild: the packaged bundle (if any) is used as is.
  if ((err as { code?: string }).code !== 'ERR_MODULE_NOT_FOUND') throw err;
  process.stderr.write('console bundle not built: esbuild is not installed (a development dependency)\n');
}
