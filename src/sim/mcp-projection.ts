/**
 * The MCP projection (wire contract §2, §4) on the official MCP v2 server package: a server factory
 * serving both MCP revisions (2025-11-25 initialize, 2026-07-28 server/discover), results as
 * structuredContent plus JCS text, and the fault flags applied per tool call (issue 2 item 5).
 */
import {
  ResourceNotFoundError,
  Server,
  type McpRequestContext,
  type McpServerFactory,
} from '@modelcontextprotocol/server';
import { jcs, unencodablePath, type Clock } from '../core/index.js';
import type { SimEndpoint } from './endpoint.js';
import { LIMITS, type FaultOptions } from './sim-options.js';
import { ToolTable, type ToolOutcome } from './tools.js';

export const MANIFEST_URI = 'mhs://manifest';

/** Transport-specific actions the fault flags need. */
export interface ProjectionHooks {
  /** Closes the connection that carries the current request (`--close-after`). */
  closeConnection(ctx: McpRequestContext): void;
  /** Key of the implicit session for requests built with this context (§4). */
  connectionKey(ctx: McpRequestContext): string;
}

function matches(flag: true | number | undefined, n: number): boolean {
  return flag === true || (typeof flag === 'number' && flag === n);
}

const never = <T>(): Promise<T> => new Promise<T>(() => undefined);

function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimeout(resolve, ms));
}

/** MCP `CallToolResult` of an outcome (§4): the object as structuredContent and as JCS text. */
export function toCallToolResult(o: ToolOutcome, padBytes = 0) {
  // JSON.stringify, not JCS, for a body the surrogate fault made unencodable on purpose.
  const text = unencodablePath(o.body) === null ? jcs(o.body) : JSON.stringify(o.body);
  const content: Array<{ type: 'text'; text: string }> = [{ type: 'text', text }];
  if (padBytes > 0) content.push({ type: 'text', text: 'x'.repeat(padBytes) });
  return { content, structuredContent: o.body, isError: o.isError };
}

/** The `--surrogate-reply` fault: the outcome with a lone surrogate in the receipt's output or the fault message. */
function withLoneSurrogate(o: ToolOutcome): ToolOutcome {
  const body = o.body;
  if (o.isError) {
    const error = (body['error'] ?? {}) as Record<string, unknown>;
    return { ...o, body: { ...body, error: { ...error, message: `${String(error['message'])} \ud800` } } };
  }
  const output = body['output'] && typeof body['output'] === 'object' ? body['output'] : {};
  return { ...o, body: { ...body, output: { ...output, note: 'lone \ud800 surrogate' } } };
}

/** Builds the per-connection (stdio) or per-request (HTTP) server factory over one shared endpoint. */
export function createProjectionFactory(ep: SimEndpoint, hooks: ProjectionHooks): McpServerFactory {
  const table = new ToolTable(ep);
  const faults: FaultOptions = ep.opts.faults;
  let toolCalls = 0;
  return (ctx: McpRequestContext) => {
    const server = new Server(
      { name: 'mhs-host-sim', version: '0.1.0' },
      {
        capabilities: { tools: {}, resources: {} },
        instructions: 'MHS endpoint simulator. MHS is not a safety channel (MHS.SAFETY.NOT_CERTIFIED).',
      },
    );
    server.setRequestHandler('tools/list', async () => ({
      tools: table.list() as Array<{ name: string; description: string; inputSchema: { type: 'object' } }>,
    }));
    server.setRequestHandler('tools/call', async (req) => {
      const name = req.params.name;
      toolCalls += 1;
      if (faults.closeAfter !== undefined && toolCalls > faults.closeAfter) {
        hooks.closeConnection(ctx);
        return never();
      }
      if (faults.latencyMs) await sleep(ep.opts.clock, faults.latencyMs);
      if (!table.isCapability(name)) {
        return toCallToolResult(
          await table.call(name, req.params.arguments, { connectionKey: hooks.connectionKey(ctx) }),
        );
      }
      const n = ep.nextCapabilityCall();
      if (matches(faults.stall, n)) return never();
      const args = req.params.arguments;
      // A command already executed is answered from retention at once (a same-id retry), never delayed again.
      const cid = ((args?._mhs ?? {}) as { command_id?: unknown }).command_id;
      const retained = typeof cid === 'string' && ep.receipts.has(cid);
      if (faults.executeAfterMs !== undefined && !retained && matches(faults.executeAfterNth ?? true, n)) {
        const key = hooks.connectionKey(ctx);
        // Owned by the endpoint: the late execution's failure is its own outcome, never the server's crash.
        ep.track(
          sleep(ep.opts.clock, faults.executeAfterMs).then(() => table.call(name, args, { connectionKey: key })),
        );
        return never();
      }
      const outcome = await table.call(name, req.params.arguments, { connectionKey: hooks.connectionKey(ctx) });
      if (matches(faults.dropReply, n)) return never();
      const pad = matches(faults.oversizeReply, n) ? LIMITS.max_frame_bytes + 64 * 1024 : 0;
      return toCallToolResult(matches(faults.surrogateReply, n) ? withLoneSurrogate(outcome) : outcome, pad);
    });
    server.setRequestHandler('resources/list', async () => ({
      resources: [{ uri: MANIFEST_URI, name: 'manifest', title: 'MHS manifest', mimeType: 'application/json' }],
    }));
    server.setRequestHandler('resources/read', async (req) => {
      if (req.params.uri !== MANIFEST_URI) throw new ResourceNotFoundError(req.params.uri);
      return { contents: [{ uri: MANIFEST_URI, mimeType: 'application/json', text: jcs(ep.manifest) }] };
    });
    return server;
  };
}
