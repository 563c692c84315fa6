import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openwopDir } from '../schemas.js';

/** One row of the published `spec/v2/path-manifest.json` (versioning.md §1.2). */
export interface ManifestOperation {
  method: string;
  path: string;
  operationId: string;
  authenticated: boolean;
}

let rows: readonly ManifestOperation[] | undefined;

/** The canonical v2 operations as published (vendored byte for byte); every path unversioned. */
export function manifestOperations(): readonly ManifestOperation[] {
  rows ??= (
    JSON.parse(readFileSync(join(openwopDir(), 'spec/v2/path-manifest.json'), 'utf8')) as {
      operations: ManifestOperation[];
    }
  ).operations;
  return rows;
}

// `/host/<org>/…` is the vendor namespace (versioning.md §5), served regardless of OpenWOP-Version.
const NOT_NEGOTIATED = new Set(['host', '.well-known']);

let segments: ReadonlySet<string> | undefined;

/** The first path segments (before any `/` or `:`) of the manifest operations that negotiate by header. */
export function manifestSegments(): ReadonlySet<string> {
  segments ??= new Set(
    manifestOperations()
      .map((o) => /^\/([^/:]+)/.exec(o.path)?.[1] ?? '')
      .filter((s) => s && !NOT_NEGOTIATED.has(s)),
  );
  return segments;
}

/** The manifest row of `operationId`, or undefined. */
export function manifestOperation(operationId: string): ManifestOperation | undefined {
  return manifestOperations().find((o) => o.operationId === operationId);
}

let hostPaths: ReadonlySet<string> | undefined;

/**
 * The manifest's exact paths under `/host/` (`/host/effect-seams`, `/host/events`): canonical operations, so they
 * negotiate by header like any unversioned path, while the rest of `/host/` stays the vendor namespace (§5).
 */
export function manifestHostPaths(): ReadonlySet<string> {
  hostPaths ??= new Set(
    manifestOperations()
      .map((o) => o.path)
      .filter((p) => p.startsWith('/host/') && !p.includes('{')),
  );
  return hostPaths;
}
