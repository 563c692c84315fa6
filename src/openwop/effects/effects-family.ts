/**
 * The effect layer of every node execution: installs `ctx.effects` (effect-guard.ts) and routes `ctx.mcp.callTool`
 * through it, so each MCP tool call a node makes is a Layer-2 effect record (v2 idempotency.md §"Layer 2"). Reads
 * (`listTools`, `readResource`, `serverHealth`) change nothing at the server and pass through unguarded.
 */
import { ErrorCode, HostError, jcs, sha256Hex } from '../../core/index.js';
import type { NodeContext, NodeModule } from '../node-registry.js';
import type { ServiceFamily } from '../service-family.js';
import type { McpSurface } from '../services/mcp-surface.js';
import { invokeToolV1 } from '../services/mcp-v1-methods.js';
import { effectGuard } from './effect-guard.js';
import type { EffectGuard } from './effect-guard.js';
import type { RunEffectRecords } from './effect-records.js';

// Refusals made before anything reached the server, and JSON-RPC errors: per MCP `tools/call` a protocol error means
// the tool did not run (a tool that ran and failed answers a result with `isError: true`, which completes the effect).
const NOT_PERFORMED = new Set<string>([
  ErrorCode.MCP_ERROR,
  ErrorCode.NOT_FOUND,
  ErrorCode.HOST_MCP_SERVER_IS_MHS_ENDPOINT,
]);

/** How a failed `tools/call` ended its attempt: a transport failure may have reached the server (unknown). */
export function mcpCallFailure(err: unknown): 'released' | 'unknown' {
  return err instanceof HostError && NOT_PERFORMED.has(err.code) ? 'released' : 'unknown';
}

/**
 * `ctx.mcp` with `callTool` guarded. A call's name is the digest of `{serverId, name, arguments}` and its occurrence
 * among identical calls of the execution (content-addressed, replay.md §"Byte-equivalence of the prefix"), so a node
 * re-executed after a restart finds the record of the same call whatever calls it skips from its own log.
 */
export function guardedMcp(inner: McpSurface, guard: EffectGuard): McpSurface {
  const seen = new Map<string, number>();
  return {
    callTool: (serverId, name, args) => {
      const request = { serverId, name, arguments: args ?? {} };
      const key = sha256Hex(jcs(request)).slice(0, 32);
      const n = seen.get(key) ?? 0;
      seen.set(key, n + 1);
      return guard.perform(
        { seam: 'mcp.client-call', name: `${key}#${n}`, request, idempotent: false, failed: mcpCallFailure },
        () => inner.callTool(serverId, name, args),
      );
    },
    listTools: (serverId, cursor) => inner.listTools(serverId, cursor),
    readResource: (serverId, uri) => inner.readResource(serverId, uri),
    serverHealth: (serverId) => inner.serverHealth(serverId),
    // v1 (mcp-v1-methods.ts): one effect per idempotencyKey of the execution, so the key, not the content, names it.
    ...(inner.invokeTool
      ? {
          invokeTool: (req) =>
            invokeToolV1(
              req,
              (r) => {
                const request = { serverId: r.serverId, name: r.toolName, arguments: r.args ?? {} };
                return guard.perform(
                  {
                    seam: 'mcp.client-call',
                    name: `idempotencyKey:${r.idempotencyKey}`,
                    request,
                    idempotent: false,
                    failed: mcpCallFailure,
                  },
                  () => inner.callTool(r.serverId, r.toolName, r.args),
                );
              },
              (serverId, cursor) => inner.listTools(serverId, cursor),
            ),
        }
      : {}),
    ...(inner.serverStatus ? { serverStatus: inner.serverStatus.bind(inner) } : {}),
  };
}

function install(ctx: NodeContext, records: RunEffectRecords, isReplay: (runId: string) => Promise<boolean>): void {
  const guard = effectGuard(records, { runId: ctx.runId, nodeId: ctx.node.id, activation: ctx.activation }, isReplay);
  const writable = ctx as { effects?: EffectGuard; mcp?: McpSurface };
  writable.effects = guard;
  if (ctx.mcp) writable.mcp = guardedMcp(ctx.mcp, guard);
}

/**
 * The family that wraps every node with its effect guard (installed by the host; it advertises nothing). It wraps
 * inside the replay layer, which resolves a replay fork's side-effecting nodes without running them.
 */
export function effectsFamily(records: RunEffectRecords, isReplay: (runId: string) => Promise<boolean>): ServiceFamily {
  return {
    name: 'effects',
    capabilities: () => ({}),
    wrap: (_node, mod): NodeModule => ({
      ...mod,
      execute: (ctx) => {
        install(ctx, records, isReplay);
        return mod.execute(ctx);
      },
    }),
  };
}
