/**
 * A Vite plugin for the test run: an import of `src/**` or `machines/**` TypeScript from a test file resolves to the
 * JavaScript that `test/global-setup.ts` compiled from it into `MHS_TEST_BUILD` (the same recipe as `npm run build`),
 * which the config marks external, so each worker's Node loads the engine as plain ESM instead of fetching and
 * evaluating some 500 transformed modules through vite-node for every test file. Test files and their helpers stay
 * under vite-node. Without a build (or with `MHS_TEST_TSX=1`) imports resolve to the sources as before.
 */
import { existsSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { Plugin } from 'vite';
import { BUILD_ENV, REPO_ROOT, TSX_ENV } from './helpers/cli-entry.js';

const COMPILED = /^(src|machines)\/.*\.ts$/;
const SETUP = 'test/global-setup.ts';

export function compiledSources(): Plugin {
  return {
    name: 'mhs-compiled-sources',
    enforce: 'pre',
    async resolveId(source, importer, options) {
      const build = process.env[TSX_ENV] === '1' ? undefined : process.env[BUILD_ENV];
      // The global setup (which makes the build, and may see a nested run's inherited one) imports the sources.
      if (!build || !importer || !source.startsWith('.') || importer.endsWith(SETUP)) return null;
      const resolved = await this.resolve(source, importer, { ...options, skipSelf: true });
      if (!resolved || resolved.external) return resolved;
      const rel = relative(REPO_ROOT, resolved.id).split(sep).join('/');
      if (!COMPILED.test(rel)) return resolved;
      const js = join(build, rel.replace(/\.ts$/, '.js'));
      return existsSync(js) ? { id: js, external: true } : resolved;
    },
  };
}
