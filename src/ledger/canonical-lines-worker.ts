/**
 * The canonical-form checking thread of package verification (issue 21 item 3): runs {@link checkCanonicalLines} for
 * the verifier (canonical-lines-checker.ts) while it hashes and walks the same file.
 */
import { parentPort } from 'node:worker_threads';
import { checkCanonicalLines } from './canonical-lines.js';
import type { LinesCheck } from './canonical-lines.js';

/** A file to check. */
export interface LinesRequest {
  id: number;
  path: string;
}

/** The check of a file, or why it could not be read. */
export type LinesResult = { id: number } & ({ check: LinesCheck } | { error: string });

parentPort?.on('message', (req: LinesRequest) => {
  checkCanonicalLines(req.path).then(
    (check) => parentPort?.postMessage({ id: req.id, check } satisfies LinesResult),
    (err: unknown) =>
      parentPort?.postMessage({
        id: req.id,
        error: err instanceof Error ? err.message : String(err),
      } satisfies LinesResult),
  );
});
