import { createServer } from 'node:net';
import { ErrorCode, HostError } from '../core/index.js';

/** `MHS.HOST.PORT_IN_USE` for `port` on `host`, naming the remedy (issue 16). */
export function portInUse(port: number, host: string, cause?: unknown): HostError {
  return new HostError(
    ErrorCode.HOST_PORT_IN_USE,
    `port ${port} on ${host} is already in use`,
    { port, host },
    {
      remediation: `Stop the process listening on port ${port} (another mhs-host serve?), or start with --port <other> (0 picks a free one).`,
      retryable: false,
      ...(cause === undefined ? {} : { cause }),
    },
  );
}

/** True for the listen error of a port another socket holds. */
export function isAddressInUse(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 'EADDRINUSE';
}

/**
 * Checks that `port` on `host` can be bound, by binding and releasing it, before anything else starts (issue 16:
 * `serve` must not attach endpoints or resume runs on the shared store and then fail to listen). Port 0 always
 * passes. Raises `MHS.HOST.PORT_IN_USE`; any other listen error is rethrown as it is.
 */
export async function assertPortFree(port: number, host: string): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (err) => reject(isAddressInUse(err) ? portInUse(port, host, err) : err));
    probe.listen({ port, host, exclusive: true }, () => resolve());
  });
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}
