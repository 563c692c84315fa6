import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ErrorCode, HostError } from '../core/index.js';

const HERE = dirname(fileURLToPath(import.meta.url));

/** Where the console's sources and its bundle live (next to this file, in the sources and in a build). */
export const CONSOLE_UI_DIR = join(HERE, 'ui');
export const CONSOLE_BUNDLE = join(HERE, 'dist', 'console.js');

/** The newest modification time of the console's sources (`ui/**`), or null when they are not here. */
function newestSource(uiDir: string): number | null {
  if (!existsSync(join(uiDir, 'main.tsx'))) return null;
  let newest = 0;
  for (const f of readdirSync(uiDir, { recursive: true, encoding: 'utf8' })) {
    if (/\.(tsx?|css)$/.test(f)) newest = Math.max(newest, statSync(join(uiDir, f)).mtimeMs);
  }
  return newest;
}

/**
 * Bundles `ui/main.tsx` (Preact components and what they import) with esbuild into one browser module at
 * `outFile`, written to a temporary name and renamed, so a concurrent reader never sees half a file.
 */
export async function buildConsoleBundle(
  outFile: string = CONSOLE_BUNDLE,
  uiDir: string = CONSOLE_UI_DIR,
): Promise<void> {
  // esbuild is a development dependency: loaded only when the sources are here to build.
  const { build } = await import('esbuild');
  mkdirSync(dirname(outFile), { recursive: true });
  const tmp = `${outFile}.${process.pid}.tmp`;
  const out = await build({
    entryPoints: [join(uiDir, 'main.tsx')],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    sourcemap: false,
    legalComments: 'none',
    logLevel: 'warning',
  });
  // uPlot's style sheet, served as /console/uplot.css next to the bundle (CSP: no inline styles).
  const css = createRequire(import.meta.url).resolve('uplot/dist/uPlot.min.css');
  copyFileSync(css, `${tmp}.css`);
  renameSync(`${tmp}.css`, join(dirname(outFile), 'uplot.css'));
  writeFileSync(tmp, out.outputFiles[0]!.contents);
  renameSync(tmp, outFile);
}

/**
 * Makes sure the served console bundle exists and is not older than its sources: in a source checkout (`ui/`
 * present: `npm start`, `mhs-host serve`, tests) it is rebuilt when missing or stale; without the sources (a
 * packaged build) it must have been built before (`npm run build:console`, run by `prepare`). Raises
 * `MHS.HOST.INTERNAL` when neither is possible.
 */
export async function ensureConsoleBundle(
  outFile: string = CONSOLE_BUNDLE,
  uiDir: string = CONSOLE_UI_DIR,
): Promise<string> {
  const newest = newestSource(uiDir);
  const complete = existsSync(outFile) && existsSync(join(dirname(outFile), 'uplot.css'));
  const built = complete ? statSync(outFile).mtimeMs : null;
  if (newest !== null && (built === null || built < newest)) await buildConsoleBundle(outFile, uiDir);
  else if (built === null)
    throw new HostError(
      ErrorCode.HOST_INTERNAL,
      'the console bundle is missing and its sources are not here',
      {
        bundle: outFile,
      },
      { remediation: 'Run `npm run build:console` in a source checkout.' },
    );
  return outFile;
}
