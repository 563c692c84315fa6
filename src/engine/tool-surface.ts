/**
 * The model-facing tool surface (HOST-030, 031, 062): one tool per bound capability of every attached endpoint,
 * named by the wire contract (§4, {@link capabilityToolName}), with the binding's input schema minus `_mhs` and a
 * description generated from the schema and semantic tags; plus the fixed read tools `mhs__devices`,
 * `mhs__read`, `mhs__safety` and `mhs__operations`. No operator tool (`mhs__permit`, `mhs__reset`) and no generic
 * "control any hardware" tool is ever offered. Capability tools are cached per manifest digest, so a changed
 * manifest regenerates its tools and an unchanged one never does.
 */
import { ErrorCode, HostError, jcs } from '../core/index.js';
import { capabilityToolName } from '../mhs/tool-names.js';
import type { Manifest, RiskClass } from '../mhs/wire-types.js';
import { capabilityFacts, descriptionDrift, modelInputSchema, renderFacts } from './tool-description.js';
import type { DriftIssue } from './tool-description.js';
import { compositionTools } from './tool-composition.js';

/** What a tool does when called. */
export type ModelToolKind =
  'capability' | 'composition' | 'devices' | 'read' | 'safety' | 'operations' | 'inspect' | 'evidence' | 'estop';

/** The binding a capability tool calls through the governed path. */
export interface CapabilityTarget {
  endpointId: string;
  deviceId: string;
  capabilityId: string;
  manifestDigest: string;
}

/** One tool as offered to a model. Frozen: nothing downstream can edit what the model was shown. */
export interface ModelTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly kind: ModelToolKind;
  /** Capability and composition tools only. */
  readonly target?: CapabilityTarget;
  /** Hints from the binding (HOST-032): read-only, and whether a call needs an approval before it is sent. */
  readonly annotations: ToolAnnotations;
}

/** Machine-readable hints, generated from the binding like the description. */
export interface ToolAnnotations {
  readOnly: boolean;
  /** A permit is required, or the risk class is R2/R3 (the host policy then asks a human, HOST-032). */
  approvalRequired: boolean;
  riskClass: RiskClass | null;
  /** The tool may change the physical world (capability tools that are not reads, the e-stop). */
  destructive?: boolean;
}

/** An attached endpoint as the surface needs it (an `EndpointActor` fits). */
export interface SurfaceEndpoint {
  readonly endpointId: string;
  readonly manifest: Manifest;
}

/** The tool list of one moment: its key changes whenever an endpoint or a manifest digest changes. */
export interface ToolSurface {
  /** `JCS([[endpoint_id, manifest_digest], ...])`, sorted. */
  readonly key: string;
  readonly tools: readonly ModelTool[];
  get(name: string): ModelTool | undefined;
}

/** The fixed tools the model may use (read-only; wire contract §4 names). */
export const MODEL_FIXED_TOOLS = ['mhs__devices', 'mhs__read', 'mhs__safety', 'mhs__operations'] as const;

/**
 * The seven fixed agent tools of the projection (wire contract §4, TPT-044), which the MCP gateway serves: the
 * reads plus the manifest, evidence export/verification and the trusted e-stop (HOST-062, 094). Never
 * `mhs__permit`, `mhs__reset` or session control.
 */
export const GATEWAY_FIXED_TOOLS = [...MODEL_FIXED_TOOLS, 'mhs__inspect', 'mhs__evidence', 'mhs__estop'] as const;

function freeze<T>(v: T): T {
  if (v && typeof v === 'object') {
    for (const x of Object.values(v)) freeze(x);
    Object.freeze(v);
  }
  return v;
}

/** Generates the capability tools of one manifest (wire names; collisions are resolved by the surface). */
export function capabilityTools(manifest: Manifest): ModelTool[] {
  const out: ModelTool[] = [];
  for (const device of manifest.devices)
    for (const b of device.capabilities)
      out.push(
        freeze({
          name: capabilityToolName(device.device_id, b.capability_id),
          description: renderFacts(capabilityFacts(manifest, device, b)),
          inputSchema: modelInputSchema(b.input_schema),
          kind: 'capability' as const,
          annotations: {
            readOnly: b.effect === 'read',
            approvalRequired: b.permit.required || b.risk_class === 'R2' || b.risk_class === 'R3',
            riskClass: b.risk_class,
            destructive: b.effect !== 'read',
          },
          target: {
            endpointId: manifest.endpoint_id,
            deviceId: device.device_id,
            capabilityId: b.capability_id,
            manifestDigest: manifest.manifest_digest,
          },
        }),
      );
  return out;
}

function deviceList(endpoints: readonly SurfaceEndpoint[]): string {
  return endpoints
    .flatMap((e) =>
      e.manifest.devices.map(
        (d) => `${d.device_id} (endpoint ${e.endpointId}, ${d.mode.toUpperCase()}, risk class ${d.risk_class})`,
      ),
    )
    .join('; ');
}

function fixedTools(endpoints: readonly SurfaceEndpoint[], gateway: boolean): ModelTool[] {
  const endpointIds = endpoints.map((e) => e.endpointId);
  const deviceIds = [...new Set(endpoints.flatMap((e) => e.manifest.devices.map((d) => d.device_id)))];
  // An empty `enum` is not valid JSON Schema: with nothing attached the ids are plain strings.
  const endpointProp = {
    type: 'string',
    ...(endpointIds.length ? { enum: endpointIds } : {}),
    description: 'Endpoint id; needed only when the device id is on more than one endpoint',
  };
  const deviceProp = { type: 'string', ...(deviceIds.length ? { enum: deviceIds } : {}), description: 'Device id' };
  const devices = deviceList(endpoints) || 'none attached';
  const obj = (properties: Record<string, unknown>, required: string[] = []) => ({
    type: 'object',
    additionalProperties: false,
    properties,
    ...(required.length ? { required } : {}),
  });
  const annotations = { readOnly: true, approvalRequired: false, riskClass: null };
  const reads = [
    {
      name: 'mhs__devices',
      kind: 'devices' as const,
      description: `Lists the attached endpoints and devices with mode, risk class, determinism, fidelity gaps, capabilities and units, rendered from their manifests. Effect: read. Devices: ${devices}.`,
      inputSchema: obj({ endpoint_id: endpointProp }),
    },
    {
      name: 'mhs__read',
      kind: 'read' as const,
      description: `Reads a device's current state: {device_id, revision, state, state_hash}. Effect: read; no command, no approval. Devices: ${devices}.`,
      inputSchema: obj(
        { endpoint_id: endpointProp, device_id: deviceProp, resource: { type: 'string', description: 'Resource' } },
        ['device_id'],
      ),
    },
    {
      name: 'mhs__safety',
      kind: 'safety' as const,
      description: `Reads a device's safety status: e-stop kind and state, interlock states, notice MHS.SAFETY.NOT_CERTIFIED. Effect: read. Devices: ${devices}.`,
      inputSchema: obj({ endpoint_id: endpointProp, device_id: deviceProp }, ['device_id']),
    },
    {
      name: 'mhs__operations',
      kind: 'operations' as const,
      description:
        'Observes the outcome of a command by command_id: the current receipt; an unsettled (running or MHS.OUTCOME.UNKNOWN) command is reconciled with the endpoint, never re-executed. Effect: read.',
      inputSchema: obj({ command_id: { type: 'string', pattern: '^cmd_', description: 'command_id' } }, ['command_id']),
    },
  ].map((t) => freeze({ ...t, annotations: { ...annotations } }));
  if (!gateway) return reads;
  const more: ModelTool[] = [
    {
      name: 'mhs__inspect',
      kind: 'inspect',
      description: `Returns an endpoint's admitted manifest (without device_id) or one device's profile: mode, risk class, capabilities with input/output schemas and units, limits. Effect: read. Devices: ${devices}.`,
      inputSchema: obj({ endpoint_id: endpointProp, device_id: deviceProp }),
      annotations: { ...annotations },
    },
    {
      name: 'mhs__evidence',
      kind: 'evidence',
      description:
        "Evidence: action export collects an endpoint's evidence chain into the host's store and records it in the host ledger; action verify recomputes the endpoint's chain and the host ledger's hash chain. Effect: read (no command).",
      inputSchema: obj(
        {
          action: { type: 'string', enum: ['export', 'verify'], description: 'export or verify' },
          endpoint_id: endpointProp,
        },
        ['action'],
      ),
      annotations: { ...annotations },
    },
    {
      name: 'mhs__estop',
      kind: 'estop',
      description: `Engages a device's emergency stop through the host's trusted stop (HOST-094): no approval, but only for an enabled endpoint and a device on the operator's e-stop allow-list; recorded as an estop.request/estop.receipt pair. A hardware-only e-stop returns where the physical stop is. MHS is not a safety channel (MHS.SAFETY.NOT_CERTIFIED). Devices: ${devices}.`,
      inputSchema: obj({ endpoint_id: endpointProp, device_id: deviceProp }, ['device_id']),
      annotations: { readOnly: false, approvalRequired: false, riskClass: null, destructive: true },
    },
  ];
  return [...reads, ...more.map(freeze)];
}

/**
 * Builds tool surfaces, caching capability tools per manifest digest (HOST-030): {@link generations} counts
 * how many manifests were turned into tools, so tests can see a changed digest regenerate and an unchanged one
 * not.
 */
export class ToolSurfaceBuilder {
  private readonly byDigest = new Map<string, ModelTool[]>();
  private last: ToolSurface | undefined;
  /** Number of manifests turned into tools so far. */
  generations = 0;

  /** `gateway`: the seven fixed tools of the MCP gateway ({@link GATEWAY_FIXED_TOOLS}); default the four reads. */
  /** `composition`: also the experimental composition tools of endpoints that advertise it (HOST-084). */
  constructor(private readonly opts: { gateway?: boolean; composition?: boolean } = {}) {}

  /** The capability tools of a manifest, from the cache when its digest was seen before. */
  toolsOf(manifest: Manifest): readonly ModelTool[] {
    const key = `${manifest.endpoint_id}\u0000${manifest.manifest_digest}`;
    let tools = this.byDigest.get(key);
    if (!tools) {
      tools = [...capabilityTools(manifest), ...(this.opts.composition ? compositionTools(manifest) : [])];
      this.byDigest.set(key, tools);
      this.generations++;
    }
    return tools;
  }

  /** The surface for these endpoints; the same object while no endpoint or manifest digest changed. */
  build(endpoints: readonly SurfaceEndpoint[]): ToolSurface {
    const eps = [...endpoints].sort((a, b) => (a.endpointId < b.endpointId ? -1 : a.endpointId > b.endpointId ? 1 : 0));
    const key = jcs(eps.map((e) => [e.endpointId, e.manifest.manifest_digest]));
    if (this.last?.key === key) return this.last;
    const caps = eps.flatMap((e) => this.toolsOf(e.manifest));
    // Two endpoints may expose the same device and capability: qualify those names with the endpoint id.
    const count = new Map<string, number>();
    for (const t of caps) count.set(t.name, (count.get(t.name) ?? 0) + 1);
    const named = caps.map((t) =>
      (count.get(t.name) ?? 0) > 1 && t.target
        ? freeze({
            ...t,
            name: capabilityToolName(t.target.deviceId, `${t.target.capabilityId}@${t.target.endpointId}`),
          })
        : t,
    );
    const tools = [...fixedTools(eps, this.opts.gateway === true), ...named];
    const index = new Map(tools.map((t) => [t.name, t]));
    const surface: ToolSurface = { key, tools, get: (name) => index.get(name) };
    // HOST-030: a drifted description is a conformance failure; never offer one.
    const drift = surfaceDrift(surface, eps);
    if (drift.length)
      throw new HostError(ErrorCode.HOST_INTERNAL, 'generated tool descriptions drifted from their schemas', { drift });
    this.last = surface;
    return surface;
  }
}

/**
 * The drift check of a whole surface (HOST-030): every capability tool against the binding it names in the
 * endpoint's current manifest. A tool whose binding is gone, or whose manifest digest is not the current one, is
 * drifted too.
 */
export function surfaceDrift(
  surface: Pick<ToolSurface, 'tools'>,
  endpoints: readonly SurfaceEndpoint[],
): Array<{ tool: string; issues: DriftIssue[] }> {
  const byId = new Map(endpoints.map((e) => [e.endpointId, e.manifest]));
  const out: Array<{ tool: string; issues: DriftIssue[] }> = [];
  for (const t of surface.tools) {
    if (t.kind !== 'capability' || !t.target) continue;
    const m = byId.get(t.target.endpointId);
    const device = m?.devices.find((d) => d.device_id === t.target?.deviceId);
    const binding = device?.capabilities.find((c) => c.capability_id === t.target?.capabilityId);
    if (!m || !device || !binding) {
      out.push({ tool: t.name, issues: [{ key: 'binding', expected: 'a bound capability' }] });
      continue;
    }
    const issues = descriptionDrift(t, m, device, binding);
    if (t.target.manifestDigest !== m.manifest_digest)
      issues.push({ key: 'manifest_digest', expected: m.manifest_digest });
    if (issues.length) out.push({ tool: t.name, issues });
  }
  return out;
}

/** The tools as a provider receives them: name, description, input schema. */
export function toolSpecs(
  surface: ToolSurface,
): Array<{ name: string; description: string; inputSchema: object; annotations: ToolAnnotations }> {
  return surface.tools.map((t) => ({
    name: t.name,
    description: t.description,
    inputSchema: t.inputSchema,
    annotations: t.annotations,
  }));
}
