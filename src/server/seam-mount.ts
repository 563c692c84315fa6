import { bindRunId, runIdFromParam } from '../openwop/v2/index.js';

/**
 * Where one major's conformance seams are mounted. Major 1 serves them under `/v1/host/sample/…`
 * (host-sample-test-seams.md); the v2 seams profile serves the same operations under `/conformance/seams/sample/…`
 * (api/seams-v2.yaml; the suite rewrites `/v1/host/sample/` to that prefix under target major 2), where run ids are
 * v2 bound ids and events are read in the v2 projection.
 */
export interface SeamMount {
  major: 1 | 2;
  prefix: string;
  /** The engine run id a `runId` parameter names. */
  runId(param: string): string;
  /** A run id as this major writes it in a response body. */
  wireRunId(engineRunId: string): string;
}

export const V1_SEAMS: SeamMount = {
  major: 1,
  prefix: '/v1/host/sample',
  runId: (p) => p,
  wireRunId: (id) => id,
};

export const V2_SEAMS: SeamMount = {
  major: 2,
  prefix: '/conformance/seams/sample',
  runId: runIdFromParam,
  wireRunId: bindRunId,
};

/** The v2 seams profile's path space (conformance.md §The seams profile). */
export const V2_SEAM_SPACE = '/conformance/seams/';

/** The v2 address of a v1 seam path (`/v1/host/sample/x` → `/conformance/seams/sample/x`); others unchanged. */
export function v2SeamPath(v1Path: string): string {
  return v1Path.startsWith(`${V1_SEAMS.prefix}/`) ? V2_SEAMS.prefix + v1Path.slice(V1_SEAMS.prefix.length) : v1Path;
}

/** The v1 address of a v2 seams-profile path, for a refusal that points a major-1 client at it. */
export function v1SeamPath(v2Path: string): string {
  return v2Path.startsWith(`${V2_SEAMS.prefix}/`) ? V1_SEAMS.prefix + v2Path.slice(V2_SEAMS.prefix.length) : v2Path;
}
