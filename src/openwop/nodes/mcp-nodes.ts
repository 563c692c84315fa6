/**
 * Node types of the `mcp` family (RFC 0144 §mcp, RFC 0204): `core.conformance.mcp-client`, which calls its own
 * `ctx.mcp.<method>` and completes with the resolved value verbatim, and an MCP-only `core.ai.callPrompt` that
 * runs `config.mcp = {tool, arguments}` on a host-configured server and records the call in the run's event log
 * with the tool output marked UNTRUSTED (openwop threat model, prompt injection).
 */
import { ErrorCode, HostError } from '../../core/index.js';
import { NodeFailure } from '../node-registry.js';
import type { NodeContext, NodeModule, NodeResult } from '../node-registry.js';
import type { RunEvent, WorkflowNode } from '../types.js';

/** The conformance-reserved typeId of the `conformance-mcp-client` fixture. */
export const MCP_CLIENT_CONFORMANCE_TYPE_ID = 'core.conformance.mcp-client';

/** A `ctx.mcp` rejection as a node failure with the rejection's code (`not_found`, `mcp_error`, ...). */
export function mcpNodeFailure(err: unknown): unknown {
  if (err instanceof HostError) return new NodeFailure(err.code, err.message, err.details);
  return err;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

function obj(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

function invalid(message: string, details: Record<string, unknown> = {}): NodeFailure {
  return new NodeFailure(ErrorCode.VALIDATION_ERROR, message, details);
}

/**
 * `core.conformance.mcp-client`: reads `method`, `serverId`, `name`, `arguments`, `cursor`, `uri` (and, for the v1
 * `invokeTool`, `idempotencyKey`, default the node's id and activation) from the run's
 * variables (its inputs over the fixture's defaults; node inputs win), calls `ctx.mcp.<method>` and completes with
 * `outputs.result` equal to the resolved value. A rejection fails the node with the rejection's code.
 */
export const mcpClientConformanceNode: NodeModule = {
  typeId: MCP_CLIENT_CONFORMANCE_TYPE_ID,
  requires: ['mcp'],
  async execute(ctx) {
    const a = { ...ctx.variables, ...ctx.inputs };
    const mcp = ctx.mcp!;
    const serverId = str(a.serverId);
    if (!serverId) throw invalid('serverId is required');
    let result: unknown;
    try {
      switch (a.method) {
        case 'callTool': {
          const name = str(a.name);
          if (!name) throw invalid('name is required for callTool');
          result = await mcp.callTool(serverId, name, obj(a.arguments));
          break;
        }
        case 'listTools':
          result = await mcp.listTools(serverId, str(a.cursor));
          break;
        case 'readResource': {
          const uri = str(a.uri);
          if (!uri) throw invalid('uri is required for readResource');
          result = await mcp.readResource(serverId, uri);
          break;
        }
        case 'serverHealth':
          result = await mcp.serverHealth(serverId);
          break;
        // The v1 methods (services/mcp-v1-methods.ts), for packs ported from major 1.
        case 'invokeTool': {
          const name = str(a.name);
          if (!name) throw invalid('name is required for invokeTool');
          result = await mcp.invokeTool!({
            serverId,
            toolName: name,
            ...(obj(a.arguments) ? { args: obj(a.arguments) } : {}),
            idempotencyKey: str(a.idempotencyKey) ?? `${ctx.node.id}:${ctx.activation}`,
          });
          break;
        }
        case 'serverStatus':
          result = await mcp.serverStatus!({ serverId });
          break;
        default:
          throw invalid('method must be callTool, listTools, readResource, serverHealth, invokeTool or serverStatus', {
            method: a.method,
          });
      }
    } catch (err) {
      throw mcpNodeFailure(err);
    }
    return { outputs: { result } };
  },
};

/** `config.mcp` of an MCP tool-call node. */
export interface McpToolCallConfig {
  tool: string;
  arguments?: Record<string, unknown>;
  /** Defaults to the node's `config.serverId`, then the host's default server. */
  serverId?: string;
}

/** The `config.mcp` of a node, or undefined when it has none. */
export function mcpToolCallConfig(node: WorkflowNode): McpToolCallConfig | undefined {
  const m = obj(node.config.mcp);
  const tool = str(m?.tool);
  if (!m || !tool) return undefined;
  const args = obj(m.arguments);
  const serverId = str(m.serverId) ?? str(node.config.serverId);
  return { tool, ...(args ? { arguments: args } : {}), ...(serverId ? { serverId } : {}) };
}

/** The principal tool calls made by the host itself are attributed to (RFC 0064). */
const SYSTEM_AGENT = 'core.system';

/** Neutralises marker look-alikes inside untrusted text so it cannot close its own marker. */
function markUntrusted(text: string): string {
  return `<UNTRUSTED>${text.replace(/<(\/?UNTRUSTED)>/gi, '&lt;$1>')}</UNTRUSTED>`;
}

function toolText(result: Record<string, unknown>): string {
  const content = Array.isArray(result.content) ? (result.content as Array<Record<string, unknown>>) : [];
  return content
    .filter((c) => c.type === 'text' && typeof c.text === 'string')
    .map((c) => c.text as string)
    .join('\n');
}

function outputsOf(serverId: string, tool: string, result: Record<string, unknown>): Record<string, unknown> {
  return {
    serverId,
    tool,
    result,
    isError: result.isError === true,
    // RFC 0020 §D: MCP tool output is untrusted content; the marker travels with it.
    trustBoundary: 'untrusted',
    contentTrust: 'untrusted',
    text: markUntrusted(toolText(result)),
  };
}

function returnedIn(history: readonly RunEvent[], callId: string): RunEvent | undefined {
  return history.find((e) => e.type === 'agent.toolReturned' && e.payload.callId === callId);
}

/**
 * Runs a node's `config.mcp` tool call through `ctx.mcp.callTool` and records it as `agent.toolCalled` /
 * `agent.toolReturned` (transport `mcp`, output marked `trustBoundary: untrusted`). A node resumed after a
 * restart reuses a recorded return instead of calling the tool again. Fails `validation_error` without
 * `config.mcp.tool`, `not_found` without a server, else with the `ctx.mcp` rejection's code.
 * Another `core.ai.callPrompt` implementation can delegate here when its node has `config.mcp`.
 */
export async function executeMcpToolCall(ctx: NodeContext, defaultServer?: string): Promise<NodeResult> {
  const cfg = mcpToolCallConfig(ctx.node);
  if (!cfg) throw invalid('config.mcp.tool is required');
  const serverId = cfg.serverId ?? defaultServer;
  if (!serverId)
    throw new NodeFailure(ErrorCode.NOT_FOUND, 'no MCP server: set config.mcp.serverId or the host default server', {
      tool: cfg.tool,
    });
  if (!ctx.mcp)
    throw new NodeFailure(ErrorCode.HOST_CAPABILITY_MISSING, 'this host provides no ctx.mcp', {
      typeId: ctx.node.typeId,
    });
  const callId = `${ctx.runId}:${ctx.node.id}:${ctx.activation}`;
  const recorded = returnedIn(ctx.history, callId);
  if (recorded && obj(recorded.payload.outcome))
    return { outputs: outputsOf(serverId, cfg.tool, recorded.payload.outcome as Record<string, unknown>) };
  const base = { agentId: SYSTEM_AGENT, toolName: cfg.tool, callId };
  if (!ctx.history.some((e) => e.type === 'agent.toolCalled' && e.payload.callId === callId)) {
    await ctx.emit([
      {
        type: 'agent.toolCalled',
        payload: { ...base, inputs: cfg.arguments ?? {}, principal: SYSTEM_AGENT, transport: 'mcp', serverId },
      },
    ]);
  }
  let result: Record<string, unknown>;
  try {
    result = await ctx.mcp.callTool(serverId, cfg.tool, cfg.arguments);
  } catch (err) {
    const failure = mcpNodeFailure(err);
    if (failure instanceof NodeFailure) {
      await ctx.emit([
        {
          type: 'agent.toolReturned',
          payload: { ...base, status: 'error', error: { code: failure.code, message: failure.message }, serverId },
        },
      ]);
    }
    throw failure;
  }
  await ctx.emit([
    {
      type: 'agent.toolReturned',
      payload: {
        ...base,
        status: result.isError === true ? 'error' : 'ok',
        outcome: result,
        trustBoundary: 'untrusted',
        contentTrust: 'untrusted',
        serverId,
      },
    },
  ]);
  return { outputs: outputsOf(serverId, cfg.tool, result) };
}

/**
 * `core.ai.callPrompt` restricted to MCP tool calls (`config.mcp`): the host runs no LLM prompt here, so a node
 * without `config.mcp` is refused at registration (`validate`) rather than run without its prompt.
 */
export function mcpCallPromptNode(defaultServer?: string): NodeModule {
  return {
    typeId: 'core.ai.callPrompt',
    requires: ['mcp'],
    validate: (node) =>
      mcpToolCallConfig(node)
        ? []
        : [
            {
              path: '/config/mcp',
              message: 'this host runs core.ai.callPrompt only for MCP tool calls (config.mcp.tool)',
            },
          ],
    execute: (ctx) => executeMcpToolCall(ctx, defaultServer),
  };
}
