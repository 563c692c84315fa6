/**
 * The governed MCP gateway (issue 14; HOST-030…033, 062…069, 094): the engine's tool surface for every enabled
 * connector, served to outside agents. It adds no path to a device: capability tools go through `engine.invoke`
 * (policy, approvals, device gates, ledger) via the same dispatch as the agent loop, with the principal of the
 * connection, never of the arguments. It owns one lifecycle: which endpoints are served. Connectors enabled by
 * any process sharing the store are attached and listed, disabled ones vanish from the list (HOST-068), and each
 * change of the list is announced once on {@link Gateway.changes}.
 */
import { Subject } from 'rxjs';
import type { Observable } from 'rxjs';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import { ErrorCode, toHostError } from '../core/index.js';
import type { HostError } from '../core/index.js';
import type { CallPrincipal } from '../engine/call-types.js';
import type { HostRuntime } from '../engine/host-runtime.js';
import { InputSchemaCache } from '../engine/schema-cache.js';
import { dispatchToolCall } from '../engine/tool-dispatch.js';
import { ToolSurfaceBuilder } from '../engine/tool-surface.js';
import type { ToolSurface } from '../engine/tool-surface.js';
import type { Manifest } from '../mhs/wire-types.js';
import { reportProgress } from './approval-progress.js';
import type { ProgressSink } from './approval-progress.js';
import { gatewayInstructions } from './gateway-instructions.js';
import { toCallToolResult } from './gateway-result.js';
import { toMcpTool } from './gateway-tools.js';

/** Default longest wait for an operator inside one tool call: under the 60 s request timeout common MCP clients use (HOST-063). */
export const DEFAULT_APPROVAL_WAIT_MS = 50_000;
/** Default interval of the store re-read that sees enablement changes made by other processes. */
export const DEFAULT_GATEWAY_POLL_MS = 2_000;
const DEFAULT_PROGRESS_MS = 5_000;
/** A connector that failed to connect is tried again after this long. */
const RECONNECT_SPACING_MS = 5_000;

/** Options of {@link createGateway}. */
export interface GatewayOptions {
  runtime: Pick<HostRuntime, 'engine' | 'ledger' | 'artifacts' | 'connectors' | 'enablement' | 'services' | 'clock'> &
    Pick<HostRuntime, 'connectEndpoint'> &
    Partial<Pick<HostRuntime, 'mayAttach'>>;
  /** Longest wait for an approval inside one call; then the call answers pending (the approval stays open). */
  approvalWaitMs?: number;
  /** Re-read of the connector rows for changes by other processes (0: only this process's changes). */
  pollMs?: number;
  /** Interval of progress notifications while a call runs. */
  progressMs?: number;
  /** Appended to the CLI commands results suggest (e.g. ` --db PATH`). */
  dbHint?: string;
  /** Failures no caller sees (a connector that cannot be attached, a lost notification). */
  onError?: (err: HostError) => void;
}

/** One connection's (or HTTP caller's) identity and request context. */
export interface GatewayCaller {
  /** From the transport: the token's name, or `local` for stdio (HOST-035). */
  principal: CallPrincipal;
  /** Transcript session and session scope of this caller's calls (HOST-034). */
  sessionId: string;
}

/** Per-request context of one tool call. */
export interface GatewayCallContext {
  /** Present when the client sent a progress token. */
  progress?: ProgressSink;
  /** The client cancelled the request: stops waiting for an approval (a sent command still settles). */
  signal?: AbortSignal;
  /** The JSON-RPC request id, for the transcript's call id. */
  requestId: string | number;
}

/** The gateway. */
export interface Gateway {
  /** The MCP tools served now (none while no connector is enabled, HOST-068). Re-reads enablement first. */
  listTools(): Promise<Tool[]>;
  /** The server instructions for what is served now (HOST-064). */
  instructions(): Promise<string>;
  /** Calls a listed tool; an unknown tool is an MCP `InvalidParams` error. */
  callTool(name: string, args: unknown, caller: GatewayCaller, ctx: GatewayCallContext): Promise<CallToolResult>;
  /** Emits whenever the tool list changed (an enable, a disable, a new manifest digest). */
  readonly changes: Observable<void>;
  close(): Promise<void>;
}

/** Creates the gateway over a host runtime; call `close()` before closing the runtime. */
export function createGateway(o: GatewayOptions): Gateway {
  const rt = o.runtime;
  const clock = rt.clock;
  const builder = new ToolSurfaceBuilder({ gateway: true, composition: rt.engine.experimentalComposition });
  const schemas = new InputSchemaCache();
  const changes = new Subject<void>();
  const failedAt = new Map<string, number>();
  const approvalWaitMs = o.approvalWaitMs ?? DEFAULT_APPROVAL_WAIT_MS;
  const report = (e: unknown) => o.onError?.(toHostError(e));
  let current: { surface: ToolSurface | null; manifests: Map<string, Manifest> } = {
    surface: null,
    manifests: new Map(),
  };
  let lastKey: string | undefined;
  let refreshing: Promise<typeof current> | undefined;
  let closed = false;

  /** Attaches enabled connectors not attached yet and rebuilds the surface over the enabled ones. */
  async function sync(): Promise<typeof current> {
    const rows = await rt.connectors.list();
    const enabled = rows.filter((r) => r.enabled);
    for (const row of enabled) {
      const ep = row.endpoint_id ? rt.engine.endpoint(row.endpoint_id) : undefined;
      if (ep && ep.connectorId === row.connector_id) continue;
      // Issue 19: a connector another process holds the endpoint lease of is attached there, not here.
      if (rt.mayAttach?.(row.connector_id) === false) continue;
      const failed = failedAt.get(row.connector_id);
      if (failed !== undefined && clock.now() - failed < RECONNECT_SPACING_MS) continue;
      try {
        await rt.connectEndpoint(row.connector_id);
        failedAt.delete(row.connector_id);
      } catch (err) {
        failedAt.set(row.connector_id, clock.now());
        report(err);
      }
    }
    const on = new Set(enabled.map((r) => r.connector_id));
    // Issue 19: endpoints other processes attach are served too; their calls go through those processes.
    const eps = (await rt.engine.handles()).filter((e) => on.has(e.connectorId));
    const surface = eps.length ? builder.build(eps) : null;
    current = { surface, manifests: new Map(eps.map((e) => [e.endpointId, e.manifest])) };
    const key = surface?.key ?? '';
    if (lastKey !== undefined && key !== lastKey) changes.next();
    lastKey = key;
    return current;
  }

  /** One sync at a time; callers during a sync share it. */
  function refresh(): Promise<typeof current> {
    refreshing ??= sync().finally(() => (refreshing = undefined));
    return refreshing;
  }

  const offEnablement = rt.enablement.onChange(() => {
    if (!closed) refresh().catch(report);
  });
  let pollTimer: ReturnType<typeof clock.setTimeout> | undefined;
  const pollMs = o.pollMs ?? DEFAULT_GATEWAY_POLL_MS;
  const arm = (): void => {
    if (closed || pollMs <= 0) return;
    pollTimer = clock.setTimeout(() => {
      refresh().catch(report).finally(arm);
    }, pollMs);
  };
  arm();

  return {
    changes: changes.asObservable(),

    async listTools() {
      const { surface, manifests } = await refresh();
      return surface ? surface.tools.map((t) => toMcpTool(t, manifests)) : [];
    },

    async instructions() {
      const { manifests } = await refresh();
      return gatewayInstructions([...manifests.values()]);
    },

    async callTool(name, args, caller, ctx) {
      const { surface } = await refresh();
      const tool = surface?.get(name);
      // HOST-068: with nothing enabled there is no tool to call.
      if (!surface || !tool) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
      const key = `mcp:${caller.principal.id}:${tool.name}`;
      const limit = AbortSignal.timeout(approvalWaitMs);
      const approvalSignal = ctx.signal ? AbortSignal.any([limit, ctx.signal]) : limit;
      const stop = ctx.progress
        ? reportProgress({
            clock,
            events: rt.services.events,
            store: rt.services.gate.store,
            key,
            sink: ctx.progress,
            everyMs: o.progressMs ?? DEFAULT_PROGRESS_MS,
            limitMs: approvalWaitMs,
            onError: report,
          })
        : () => undefined;
      try {
        const call = await dispatchToolCall(
          {
            engine: rt.engine,
            ledger: rt.ledger,
            transcript: rt.artifacts,
            schemas,
            safety: rt.services.safety,
          },
          surface,
          { id: `mcp:${String(ctx.requestId)}`, name: tool.name, arguments: args },
          {
            agentRunId: caller.sessionId,
            principal: caller.principal,
            approvalSignal,
            approvalKey: key,
            disclosure: { surface: 'gateway' },
          },
        );
        return toCallToolResult(call, o.dbHint);
      } catch (err) {
        // The tool_call entry could not be written (HOST-093): a host fault, reported in full.
        const e = toHostError(err, ErrorCode.HOST_LEDGER_UNAVAILABLE);
        return { content: [{ type: 'text', text: JSON.stringify({ error: e.toWire() }) }], isError: true };
      } finally {
        stop();
      }
    },

    async close() {
      closed = true;
      offEnablement();
      if (pollTimer) clock.clearTimeout(pollTimer);
      await refreshing?.catch(() => undefined);
      changes.complete();
    },
  };
}
