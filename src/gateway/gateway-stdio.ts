/**
 * `mhs-host mcp` over stdio, the form an MCP harness launches (Claude Desktop, Claude Code, Cursor): one
 * connection on this process's stdin/stdout, principal `{kind: "agent", id: "local"}` (HOST-035: the person who
 * launched it). `notifications/tools/list_changed` goes out whenever the gateway's tool list changes.
 */
import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport, serveStdio } from '@modelcontextprotocol/server/stdio';
import type { IdFactory } from '../core/index.js';
import type { Gateway, GatewayCaller } from './gateway.js';
import { gatewayServerFactory } from './gateway-server.js';
import { InboundFrameGuard } from './stdio-frame-guard.js';

/** Options of {@link serveGatewayStdio}. */
export interface GatewayStdioOptions {
  ids: IdFactory;
  stdin?: Readable;
  stdout?: Writable;
  /** Called once when the client closes the connection (stdin ends). */
  onClose: () => void;
  onError?: (err: Error) => void;
}

/** Serves the gateway on stdio; returns the handle that closes the connection. */
export function serveGatewayStdio(gw: Gateway, o: GatewayStdioOptions): { close(): Promise<void> } {
  const caller: GatewayCaller = {
    principal: { kind: 'agent', id: 'local', name: 'local' },
    sessionId: o.ids.next('run'),
  };
  // Read well past the frame limit so the guard can refuse a large frame whole and keep serving.
  const wire = new StdioServerTransport(o.stdin ?? process.stdin, o.stdout ?? process.stdout, {
    maxBufferSize: 64 * 1024 * 1024,
  });
  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    o.onClose();
  };
  const transport = new InboundFrameGuard(wire);
  const handle = serveStdio(
    gatewayServerFactory(gw, () => caller, { pushListChanged: true }),
    { transport, ...(o.onError ? { onerror: o.onError } : {}) },
  );
  (o.stdin ?? process.stdin).once('end', end);
  return {
    async close() {
      await handle.close();
      end();
    },
  };
}
