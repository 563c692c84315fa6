import { ErrorCode, HostError, toHostError } from '../core/index.js';
import { isStoreFailure, ledgerUnavailable } from '../ledger/ledger-health.js';

const OUTPUT_ERRNO = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EACCES', 'EPERM', 'EEXIST', 'ENOTDIR', 'EISDIR']);

/**
 * Normalises what reached the CLI's top level (issue 16 item 3): a HostError stays; a store that cannot be written
 * is `MHS.HOST.LEDGER_UNAVAILABLE`; a file the CLI cannot write (full disk, read-only, `--out` onto a file) is
 * `MHS.HOST.OUTPUT_UNWRITABLE` naming the path; anything else is `MHS.HOST.INTERNAL` (a catch-all never blames
 * the caller).
 */
export function cliError(err: unknown): HostError {
  if (err instanceof HostError) return err;
  const e = err as { code?: unknown; path?: unknown; syscall?: unknown } | null;
  const errno = typeof e?.code === 'string' ? e.code : undefined;
  const path = typeof e?.path === 'string' ? e.path : undefined;
  if (errno && OUTPUT_ERRNO.has(errno) && (path || errno === 'ENOSPC' || errno === 'EDQUOT'))
    return new HostError(
      ErrorCode.HOST_OUTPUT_UNWRITABLE,
      `cannot write ${path ?? 'the output'}: ${errno === 'ENOSPC' || errno === 'EDQUOT' ? 'the disk is full' : errno}`,
      { ...(path ? { path } : {}), errno },
      { remediation: 'Free disk space, or write to a path that is writable and does not exist yet.', cause: err },
    );
  if (isStoreFailure(err)) return ledgerUnavailable(err, path ?? 'the store');
  return toHostError(err);
}

/**
 * What a command does when its stdout fails. The reader went away (EPIPE: `mhs-host ledger show | head`): a
 * one-shot command ends quietly with 0, as Unix tools do; a long-running host (`serve`, `onEpipe: 'ignore'`) stays
 * up, its stdout carries only start and stop lines. Any other write failure (a full disk behind `>`) is reported
 * with {@link cliError} and exit code 1.
 */
export function guardStdout(
  stream: NodeJS.EventEmitter,
  exit: (code: number) => void,
  onEpipe: 'exit' | 'ignore' = 'exit',
): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') return onEpipe === 'exit' ? exit(0) : undefined;
    const e = cliError(err);
    process.stderr.write(`error ${e.code}: ${e.message}\n`);
    if (e.remediation) process.stderr.write(`  ${e.remediation}\n`);
    exit(1);
  });
}
