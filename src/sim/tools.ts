/**
 * The projection's tool table (wire contract §4): fixed tools, one tool per capability named by
 * `capabilityToolName`, and the dispatcher that turns outcomes into MHS results.
 */
import { ErrorCode, HostError, jcs, toHostError } from '../core/index.js';
import type { CapabilityBinding, ControlFields } from '../mhs/wire-types.js';
import { COMPOSITION_CAPABILITY, COMPOSITION_SCHEMA, COMPOSITION_TOOL } from '../mhs/composition.js';
import { capabilityToolName } from '../mhs/tool-names.js';
import { runComposition } from './composition.js';
import type { SimDevice } from './device.js';
import type { SimEndpoint } from './endpoint.js';
import { fixedTools, type ToolContext, type ToolDef } from './fixed-tools.js';
import { invokeCapability } from './invoke.js';
import { LIMITS } from './sim-options.js';
import { CONTROL_SCHEMA, validateAgainst } from './validation.js';

/** MHS outcome of a tool call: the object, or a fault (`isError: true`). */
export interface ToolOutcome {
  isError: boolean;
  body: Record<string, unknown>;
}

/** Tool description generated from the binding (HOST-030): summary, tags, units, permit. */
function describe(device: SimDevice, b: CapabilityBinding): string {
  const props = (b.input_schema['properties'] ?? {}) as Record<string, Record<string, unknown>>;
  const inputs = Object.entries(props).map(([k, p]) => {
    const range =
      p['minimum'] !== undefined || p['maximum'] !== undefined ? ` ${p['minimum'] ?? ''}..${p['maximum'] ?? ''}` : '';
    return `${k}: ${String(p['type'])}${p['x-unit'] ? ` [${String(p['x-unit'])}]` : ''}${range}`;
  });
  const permit = b.permit.required ? `permit required (${b.permit.approval} approval)` : 'no permit';
  return (
    `${device.profile.display_name} (${device.id}, ${device.profile.mode}, ${b.risk_class}): ${b.summary} ` +
    `Tags: ${b.semantic_tags.join(', ')}. Effect: ${b.effect}; ${permit}. Inputs: ${inputs.join('; ') || 'none'}.`
  );
}

function capabilityTool(ep: SimEndpoint, device: SimDevice, b: CapabilityBinding): ToolDef {
  const schema = b.input_schema;
  return {
    name: capabilityToolName(device.id, b.capability_id),
    description: describe(device, b),
    inputSchema: { ...schema, properties: { ...((schema['properties'] as object) ?? {}), _mhs: CONTROL_SCHEMA } },
    capability: true,
    run: (args, ctx) => {
      const { _mhs, ...input } = args;
      validateAgainst(CONTROL_SCHEMA, _mhs ?? {}, '_mhs');
      return invokeCapability(ep, {
        connectionKey: ctx.connectionKey,
        device,
        binding: b,
        input,
        control: (_mhs as ControlFields | undefined) ?? {},
      }) as unknown as Promise<Record<string, unknown>>;
    },
  };
}

/** `mhs__composition_run` (experimental, only with `--enable-composition`). */
function compositionTool(ep: SimEndpoint): ToolDef {
  return {
    name: COMPOSITION_TOOL,
    description:
      `EXPERIMENTAL ${COMPOSITION_CAPABILITY} (reserved in OpenMHS 0.9): run an ordered list of capability calls ` +
      'on one device; one receipt per step plus the composition receipt carrying the composition digest.',
    inputSchema: {
      ...COMPOSITION_SCHEMA,
      properties: { ...COMPOSITION_SCHEMA.properties, _mhs: CONTROL_SCHEMA },
    } as unknown as Record<string, unknown>,
    capability: true,
    run: (args, ctx) => runComposition(ep, ctx.connectionKey, args) as unknown as Promise<Record<string, unknown>>,
  };
}

/** The tool table of a projection. */
export class ToolTable {
  readonly tools = new Map<string, ToolDef>();

  constructor(private readonly ep: SimEndpoint) {
    for (const t of fixedTools(ep, ep.opts.operatorTools)) this.tools.set(t.name, t);
    for (const d of ep.devices.values()) {
      for (const b of d.profile.capabilities) {
        const t = capabilityTool(ep, d, b);
        this.tools.set(t.name, t);
      }
    }
    if (ep.opts.composition) this.tools.set(COMPOSITION_TOOL, compositionTool(ep));
  }

  /** True when `name` is a capability tool (fault flags apply to these). */
  isCapability(name: string): boolean {
    return name.startsWith('mhs__cap__') && this.tools.has(name);
  }

  list(): Array<{ name: string; description: string; inputSchema: Record<string, unknown> }> {
    return [...this.tools.values()].map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema,
    }));
  }

  /** Runs a tool; faults become `{isError: true, body: {error: MhsError}}`, never a thrown error. */
  async call(name: string, args: unknown, ctx: ToolContext): Promise<ToolOutcome> {
    try {
      const a = (args ?? {}) as Record<string, unknown>;
      if (jcs(a).length > LIMITS.max_frame_bytes) {
        throw new HostError(ErrorCode.LIMIT_FRAME, 'arguments exceed max_frame_bytes', {
          max_frame_bytes: LIMITS.max_frame_bytes,
        });
      }
      if (name === COMPOSITION_TOOL) this.ep.compositionCalls += 1; // counted even when not served
      this.ep.assertEnabled();
      const tool = this.tools.get(name);
      if (!tool) {
        throw new HostError(
          ErrorCode.SCHEMA_INVALID_INPUT,
          `unknown tool ${name}`,
          { tool: name },
          {
            remediation: 'list the tools; capability tools are mhs__cap__<device>__<capability>',
          },
        );
      }
      if (typeof args !== 'object' || args === null || Array.isArray(args)) {
        throw new HostError(ErrorCode.SCHEMA_INVALID_INPUT, 'arguments must be an object', { tool: name });
      }
      if (!tool.capability || !this.isCapability(name)) validateAgainst(tool.inputSchema, a, name);
      return { isError: false, body: await tool.run(a, ctx) };
    } catch (err) {
      const e = err instanceof HostError ? err : toHostError(err);
      return { isError: true, body: { error: e.toWire() } };
    }
  }
}
