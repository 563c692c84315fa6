import { createHash } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { effectSeamManifest } from '../../openwop/v2/index.js';
import type { HostBuild } from '../../openwop/v2/index.js';
import { callerOf } from '../auth.js';

// The code tree this module was loaded from (`src/`, `dist/` or a test build): this file is `<tree>/server/v2/…`.
const TREE = dirname(dirname(dirname(fileURLToPath(import.meta.url))));

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await filesUnder(p)));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

/** `artifact-sha256`: SHA-256 over the relative path and the SHA-256 of every file of the running code tree, sorted. */
async function treeDigest(root: string): Promise<HostBuild> {
  const h = createHash('sha256');
  for (const f of (await filesUnder(root)).map((p) => relative(root, p)).sort()) {
    const bytes = await readFile(join(root, f));
    h.update(`${f}\0${createHash('sha256').update(bytes).digest('hex')}\n`);
  }
  return { kind: 'artifact-sha256', id: h.digest('hex') };
}

/**
 * `GET /host/effect-seams` (v2 `getEffectSeamManifest`, replay.md §"The effect-seam manifest", RFC 0173 §C): every
 * outbound effect path the node runtime can reach, each guarded by replay suppression. Authenticated, as its manifest
 * row says; the build digest is computed once, on the first request.
 */
export function registerV2EffectSeamsRoute(app: FastifyInstance, name: string): void {
  let build: Promise<HostBuild> | undefined;
  app.get('/host/effect-seams', { config: { operationId: 'getEffectSeamManifest' } }, async (req) => {
    callerOf(req);
    build ??= treeDigest(TREE).catch((err: unknown) => {
      build = undefined; // a failed read is not cached
      throw err;
    });
    return effectSeamManifest(name, await build);
  });
}
