// Whether a `sim` child may start from the simulator's startup snapshot of a built tree (src/build/sim-snapshot.ts),
// and the node arguments that do. A blob works only with the node binary that built it (Node refuses another
// version's), so its version and architecture are recorded beside it and compared here; otherwise the caller
// starts the one-file bundle. Plain JavaScript: bin/mhs-host.js reads it before anything can compile TypeScript.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';

/** The one-file `sim` bundle of a built tree (src/build/sim-build.ts), relative to the tree's root. */
export const SIM_BUNDLE = 'src/sim/sim-bundle.js';
/** The blob and its record, relative to the tree's root (next to the sim bundle: family.ts reads `devices/`). */
export const SIM_SNAPSHOT_BLOB = 'src/sim/sim-snapshot.blob';
export const SIM_SNAPSHOT_META = 'src/sim/sim-snapshot.json';

/** What ties a blob to the running node binary. */
export function snapshotMeta() {
  return { node: process.version, arch: process.arch, platform: process.platform };
}

/** `--snapshot-blob BLOB` for `tree`, when it has a blob built by this node binary; else undefined. */
export function simSnapshotArgs(tree) {
  const blob = join(tree, SIM_SNAPSHOT_BLOB);
  let meta;
  try {
    meta = JSON.parse(readFileSync(join(tree, SIM_SNAPSHOT_META), 'utf8'));
  } catch {
    return undefined;
  }
  const now = snapshotMeta();
  const same = Object.keys(now).every((k) => meta?.[k] === now[k]);
  return same && existsSync(blob) ? ['--snapshot-blob', blob] : undefined;
}

/** Node arguments that start `sim` from the built `tree` (append `sim` and its arguments): the snapshot, else the bundle. */
export function simStartArgs(tree) {
  return simSnapshotArgs(tree) ?? [join(tree, SIM_BUNDLE)];
}
