/**
 * What a command does when the reader of its stdout goes away (issue 16: `mhs-host ledger show | head` died with an
 * EPIPE stack trace). A one-shot command (`exit`) ends quietly with 0: the reader took what it wanted. A long-running
 * host (`ignore`, `serve`) stays up: its stdout carries only start and stop lines, its log goes to stderr. Any other
 * stdout error is rethrown as before.
 */
export function onClosedStdout(
  action: 'exit' | 'ignore',
  stream: NodeJS.EventEmitter = process.stdout,
  exit: (code: number) => void = (c) => process.exit(c),
): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    if (action === 'exit') exit(0);
  });
}
