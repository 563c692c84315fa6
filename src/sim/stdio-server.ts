/** stdio transport of the projection (wire contract §2): one connection per process. */
import type { Readable, Writable } from 'node:stream';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import type { SimEndpoint } from './endpoint.js';
import { createProjectionFactory } from './mcp-projection.js';

/**
 * Serves the endpoint on this process's stdin/stdout. The read buffer is larger than the frame
 * limit so an oversized request reaches the tool layer and gets `MHS.LIMIT.FRAME` (not a dead pipe).
 * `onClose` runs when the client closes stdin or `--close-after` closes the connection. `io`: other streams
 * (the startup snapshot's build runs one session over in-memory streams, src/cli/sim-snapshot.ts).
 */
export function serveStdioProjection(
  ep: SimEndpoint,
  onClose: () => void,
  io: { input: Readable; output: Writable } = { input: process.stdin, output: process.stdout },
): { close(): Promise<void> } {
  const transport = new StdioServerTransport(io.input, io.output, { maxBufferSize: 64 * 1024 * 1024 });
  const factory = createProjectionFactory(ep, {
    closeConnection: () => {
      void handle.close().finally(onClose);
    },
    connectionKey: () => 'stdio',
  });
  const handle = serveStdio(factory, { transport, onerror: (e) => process.stderr.write(`sim stdio: ${e.message}\n`) });
  io.input.once('end', onClose);
  return handle;
}
