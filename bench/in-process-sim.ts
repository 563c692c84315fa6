/**
 * A bundled simulator endpoint in this process, reached over the MCP SDK's in-memory transport pair: the same
 * projection (`serveStdio` over a custom transport) and the same connector as a stdio child, without the pipe.
 */
import { InMemoryTransport } from '@modelcontextprotocol/client';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { RealClock } from '../src/core/index.js';
import { connect } from '../src/mhs/connector.js';
import type { MhsConnection } from '../src/mhs/connector.js';
import { SimEndpoint } from '../src/sim/endpoint.js';
import { loadFamily } from '../src/sim/family.js';
import { createProjectionFactory } from '../src/sim/mcp-projection.js';

/** An in-process conveyor simulator; `client` is the host side of its transport pair. */
export function memorySim(endpointId: string): { client: InMemoryTransport; close(): Promise<void> } {
  const ep = new SimEndpoint({
    families: [loadFamily('conveyor')],
    endpointId,
    clock: new RealClock(),
    seed: 1,
    operatorTools: false,
    policy: null,
    faults: {},
    timeScale: 1000,
    transports: [],
  });
  const [client, server] = InMemoryTransport.createLinkedPair();
  const factory = createProjectionFactory(ep, { closeConnection: () => undefined, connectionKey: () => 'memory' });
  const handle = serveStdio(factory, { transport: server });
  return { client, close: () => handle.close() };
}

/** Connects the host's connector to an in-process simulator. */
export async function connectMemorySim(id: string): Promise<{ conn: MhsConnection; close(): Promise<void> }> {
  const sim = memorySim(`mhs://bench/${id}`);
  const conn = await connect(
    {
      connector_id: `mhs-bench-${id}`,
      transport: 'stdio',
      command: ['in-process'],
      endpoint_id: null,
      enabled: true,
      source: { kind: 'registry', ref: 'bench' },
      auth: { scheme: 'local' },
    },
    { transport: sim.client },
  );
  return { conn, close: sim.close };
}
