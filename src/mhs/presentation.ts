/**
 * What the model and the operator are shown for an endpoint (HOST-013, 014, 015, 064, 065),
 * rendered from the manifest alone: a pure function with a structured form and a text form.
 * Fidelity gaps are inline text, never a link (HOST-015).
 */
import { capabilityToolName } from './tool-names.js';
import type { CapabilityBinding, DeviceProfile, Manifest } from './wire-types.js';

/** The statement that MHS is not a safety channel (HOST-003, HOST-064). */
export const SAFETY_STATEMENT =
  'MHS.SAFETY.NOT_CERTIFIED: MHS is not a safety channel. It does not replace hardware safety, interlocks or a physical emergency stop.';

/** Shown where an endpoint carries no conformance claim (HOST-014): never an implied pass. */
export const NO_CLAIM = 'no claim';

/** One numeric or other field of a capability's input or output, with its unit (HOST-065). */
export interface FieldPresentation {
  name: string;
  type: string;
  unit: string | null;
  required: boolean;
  minimum?: number;
  maximum?: number;
  enum?: unknown[];
  description?: string;
}

export interface CapabilityPresentation {
  capability_id: string;
  tool_name: string;
  /** The physical summary from the manifest. */
  summary: string;
  effect: CapabilityBinding['effect'];
  risk_class: CapabilityBinding['risk_class'];
  semantic_tags: string[];
  permit_required: boolean;
  approval: CapabilityBinding['permit']['approval'];
  inputs: FieldPresentation[];
  outputs: FieldPresentation[];
}

export interface DevicePresentation {
  device_id: string;
  instance_id: string;
  display_name: string;
  mode: DeviceProfile['mode'];
  risk_class: DeviceProfile['risk_class'];
  /** The manifest summary on one line. */
  summary: string;
  /** Simulated and hybrid devices only (HOST-013). */
  determinism_kind?: DeviceProfile['determinism']['kind'];
  /** Simulated and hybrid devices only, in full (HOST-015). */
  fidelity_gaps?: string[];
  estop: DeviceProfile['estop']['kind'];
  capabilities: CapabilityPresentation[];
}

export interface EndpointPresentation {
  endpoint_id: string;
  display_name: string;
  /** `self`, `verified` or `no claim` (HOST-014). */
  trust: 'self' | 'verified' | typeof NO_CLAIM;
  /** `CL1`..`CL5` or `no claim`. */
  conformance_level: string;
  report_ref: string | null;
  /** Trust of the record that supplied the endpoint (HOST-014), when known to the caller. */
  source_trust?: string;
  source?: string;
  manifest_digest: string;
  safety_notice: 'MHS.SAFETY.NOT_CERTIFIED';
  safety_statement: string;
  devices: DevicePresentation[];
}

/** Context the manifest does not carry: where the endpoint was found and how far that is trusted. */
export interface PresentationContext {
  source?: string;
  sourceTrust?: string;
}

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

function fields(schema: Record<string, unknown>): FieldPresentation[] {
  const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  return Object.entries(props)
    .filter(([name]) => name !== '_mhs')
    .map(([name, p]) => {
      const f: FieldPresentation = {
        name,
        type: Array.isArray(p.type) ? (p.type as string[]).join('|') : String(p.type ?? 'any'),
        unit: typeof p['x-unit'] === 'string' ? (p['x-unit'] as string) : null,
        required: required.has(name),
      };
      if (typeof p.minimum === 'number') f.minimum = p.minimum;
      if (typeof p.maximum === 'number') f.maximum = p.maximum;
      if (Array.isArray(p.enum)) f.enum = p.enum as unknown[];
      if (typeof p.description === 'string') f.description = p.description;
      return f;
    });
}

function capability(deviceId: string, c: CapabilityBinding): CapabilityPresentation {
  return {
    capability_id: c.capability_id,
    tool_name: capabilityToolName(deviceId, c.capability_id),
    summary: oneLine(c.summary),
    effect: c.effect,
    risk_class: c.risk_class,
    semantic_tags: [...c.semantic_tags],
    permit_required: c.permit.required,
    approval: c.permit.approval,
    inputs: fields(c.input_schema),
    outputs: fields(c.output_schema),
  };
}

function device(d: DeviceProfile): DevicePresentation {
  const p: DevicePresentation = {
    device_id: d.device_id,
    instance_id: d.instance_id,
    display_name: d.display_name,
    mode: d.mode,
    risk_class: d.risk_class,
    summary: oneLine(d.summary),
    estop: d.estop.kind,
    capabilities: d.capabilities.map((c) => capability(d.device_id, c)),
  };
  if (d.mode !== 'hardware') {
    p.determinism_kind = d.determinism.kind;
    p.fidelity_gaps = [...(d.fidelity?.gaps ?? [])];
  }
  return p;
}

/** Renders the structured presentation of an admitted manifest. Pure. */
export function presentEndpoint(manifest: Manifest, ctx: PresentationContext = {}): EndpointPresentation {
  const claim = manifest.conformance;
  const p: EndpointPresentation = {
    endpoint_id: manifest.endpoint_id,
    display_name: manifest.display_name,
    trust: claim ? claim.trust : NO_CLAIM,
    conformance_level: claim ? claim.level : NO_CLAIM,
    report_ref: claim?.report_ref ?? null,
    manifest_digest: manifest.manifest_digest,
    safety_notice: manifest.safety_notice,
    safety_statement: SAFETY_STATEMENT,
    devices: manifest.devices.map(device),
  };
  if (ctx.source !== undefined) p.source = ctx.source;
  if (ctx.sourceTrust !== undefined) p.source_trust = ctx.sourceTrust;
  return p;
}

function fieldText(f: FieldPresentation): string {
  const range = f.minimum !== undefined || f.maximum !== undefined ? ` ${f.minimum ?? '…'}..${f.maximum ?? '…'}` : '';
  const unit = f.unit ? ` [${f.unit}]` : '';
  const en = f.enum ? ` one of ${f.enum.map((v) => JSON.stringify(v)).join(', ')}` : '';
  const desc = f.description ? ` (${f.description})` : '';
  return `${f.name}${f.required ? '' : '?'}: ${f.type}${range}${unit}${en}${desc}`;
}

/** Renders the presentation as text for the model's context and the operator's terminal. Pure. */
export function renderEndpointText(p: EndpointPresentation): string {
  const lines: string[] = [];
  const claim = p.trust === NO_CLAIM ? NO_CLAIM : `${p.conformance_level} (${p.trust})`;
  lines.push(`Endpoint ${p.endpoint_id} — ${p.display_name}`);
  lines.push(
    `  conformance: ${claim}; trust: ${p.trust}${p.source ? `; source: ${p.source}` : ''}${p.source_trust ? ` (${p.source_trust})` : ''}`,
  );
  lines.push(`  ${p.safety_statement}`);
  for (const d of p.devices) {
    lines.push(`  Device ${d.device_id} (${d.display_name}, instance ${d.instance_id})`);
    lines.push(`    mode: ${d.mode.toUpperCase()}; risk class: ${d.risk_class}; e-stop: ${d.estop}`);
    lines.push(`    summary: ${d.summary}`);
    if (d.determinism_kind !== undefined) {
      lines.push(`    determinism: ${d.determinism_kind}`);
      lines.push(
        `    fidelity gaps: ${d.fidelity_gaps && d.fidelity_gaps.length ? d.fidelity_gaps.join('; ') : 'none declared'}`,
      );
    }
    for (const c of d.capabilities) {
      const permit = c.permit_required ? `; permit: ${c.approval} approval` : '';
      lines.push(`    - ${c.capability_id} (${c.effect}, ${c.risk_class}${permit}) tool ${c.tool_name}: ${c.summary}`);
      if (c.semantic_tags.length) lines.push(`      tags: ${c.semantic_tags.join(', ')}`);
      for (const f of c.inputs) lines.push(`      in  ${fieldText(f)}`);
      for (const f of c.outputs) lines.push(`      out ${fieldText(f)}`);
    }
  }
  return lines.join('\n');
}
