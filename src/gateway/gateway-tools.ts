/**
 * The gateway's tools as MCP `Tool` objects (HOST-030, 031, 032): name, description and input schema exactly as
 * the engine's tool surface generated them, MCP annotations derived from the binding, the risk class and approval
 * hint under `_meta`, and an `outputSchema` for capability tools whose binding declares an output schema.
 */
import type { Tool } from '@modelcontextprotocol/server';
import type { ModelTool } from '../engine/tool-surface.js';
import type { Manifest } from '../mhs/wire-types.js';

/** `_meta` key of the gateway's tool hints. */
export const TOOL_META_KEY = 'io.mhs-host/tool';

const RECEIPT_STATUS = { type: 'string', description: 'receipt status (completed, rejected, failed, running, ...)' };

/**
 * What a capability tool returns when it is not an error (HOST-033): the command, how it settled and the full
 * receipt, whose `output` follows the binding's output schema when the command completed.
 */
function capabilityOutputSchema(output: Record<string, unknown>): Record<string, unknown> {
  return {
    type: 'object',
    required: ['command_id', 'outcome', 'receipt'],
    properties: {
      command_id: { type: 'string' },
      outcome: { type: 'string', enum: ['final', 'running', 'unknown'] },
      receipt: {
        type: 'object',
        required: ['status'],
        properties: { status: RECEIPT_STATUS, output: { anyOf: [output, { type: 'null' }] } },
      },
    },
  };
}

/** The binding's output schema, when the manifest has one for this tool. */
function outputSchemaOf(tool: ModelTool, manifests: ReadonlyMap<string, Manifest>): Record<string, unknown> | null {
  const t = tool.target;
  if (!t) return null;
  const binding = manifests
    .get(t.endpointId)
    ?.devices.find((d) => d.device_id === t.deviceId)
    ?.capabilities.find((c) => c.capability_id === t.capabilityId);
  const out = binding?.output_schema;
  return out && typeof out === 'object' && Object.keys(out).length ? out : null;
}

/** One surface tool as MCP lists it. */
export function toMcpTool(tool: ModelTool, manifests: ReadonlyMap<string, Manifest>): Tool {
  const a = tool.annotations;
  const output = tool.kind === 'capability' ? outputSchemaOf(tool, manifests) : null;
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema as Tool['inputSchema'],
    ...(output ? { outputSchema: capabilityOutputSchema(output) as Tool['outputSchema'] } : {}),
    annotations: {
      readOnlyHint: a.readOnly,
      destructiveHint: a.destructive === true,
      // A repeated command is a second command; reads and the stop may be repeated.
      idempotentHint: a.readOnly || tool.kind === 'estop',
      openWorldHint: tool.kind === 'capability' || tool.kind === 'composition' || tool.kind === 'estop',
    },
    _meta: {
      [TOOL_META_KEY]: {
        kind: tool.kind,
        risk_class: a.riskClass,
        approval_required: a.approvalRequired,
        ...(tool.target
          ? {
              endpoint_id: tool.target.endpointId,
              device_id: tool.target.deviceId,
              capability_id: tool.target.capabilityId,
              manifest_digest: tool.target.manifestDigest,
            }
          : {}),
      },
    },
  };
}
