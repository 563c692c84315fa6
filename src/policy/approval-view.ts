import { shortDigest } from '../core/index.js';
import type { CapabilityBinding, DeviceProfile } from '../mhs/wire-types.js';
import type { GovernedCallContext } from './call-gate.js';

/** One input field in readable form: the value as JSON text plus its unit from `x-unit`. */
export interface InputLine {
  path: string;
  value: string;
  unit: string | null;
  description: string | null;
}

/**
 * Everything HOST-040 requires on one approval surface, built from the manifest (device profile,
 * binding) and the validated input. It holds no model prose: only manifest fields and input values.
 */
export interface ApprovalView {
  endpoint_id: string;
  device: { device_id: string; display_name: string; mode: string; risk_class: string };
  capability: { capability_id: string; summary: string; semantic_tags: string[]; effect: string; risk_class: string };
  input: InputLine[];
  input_json: string;
  input_digest: string;
  input_digest_short: string;
  resource: string | null;
  expected_revision: number | null;
  permit: { required: boolean; ttl_ms: number; single_use: true; approval: string };
  fidelity_gaps: string[] | null;
  safety_notice: 'MHS.SAFETY.NOT_CERTIFIED';
  estop: { kind: string; physical_ref: string | null; statement: string };
}

type Schema = { properties?: Record<string, Schema>; items?: Schema; 'x-unit'?: unknown; description?: unknown };

function lines(value: unknown, schema: Schema | undefined, path: string, out: InputLine[]): void {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const key of Object.keys(value).sort()) {
      lines((value as Record<string, unknown>)[key], schema?.properties?.[key], path ? `${path}.${key}` : key, out);
    }
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((v, i) => lines(v, schema?.items, `${path}[${i}]`, out));
    return;
  }
  out.push({
    path,
    value: JSON.stringify(value) ?? 'null',
    unit: typeof schema?.['x-unit'] === 'string' ? schema['x-unit'] : null,
    description: typeof schema?.description === 'string' ? schema.description : null,
  });
}

/** The e-stop statement of HOST-003/046: what this host can and cannot stop. */
export function estopStatement(device: Pick<DeviceProfile, 'estop' | 'mode'>): string {
  const ref = device.estop?.physical_ref;
  switch (device.estop?.kind) {
    case 'software':
      return 'Software e-stop: the E-STOP button on this page sends mhs__estop to the endpoint. MHS is not a safety channel; the installation\u2019s hardware safety still applies.';
    case 'both':
      return `Software e-stop on this page (mhs__estop) and a physical stop at: ${ref ?? 'unknown location'}. MHS is not a safety channel; use the physical stop in an emergency.`;
    case 'hardware':
      return `Hardware e-stop only: this host cannot stop the device. Physical stop location: ${ref ?? 'unknown location'}.`;
    default:
      return 'E-stop kind unknown: this host cannot stop the device.';
  }
}

/** Builds the {@link ApprovalView} for a governed call (HOST-040). */
export function buildApprovalView(ctx: GovernedCallContext, permitTtlMs: number): ApprovalView {
  const d: DeviceProfile = ctx.device;
  const b: CapabilityBinding = ctx.binding;
  const input: InputLine[] = [];
  lines(ctx.input, b.input_schema as Schema, '', input);
  const simulatedish = d.mode === 'simulated' || d.mode === 'hybrid';
  return {
    endpoint_id: ctx.endpointId,
    device: { device_id: d.device_id, display_name: d.display_name, mode: d.mode, risk_class: d.risk_class },
    capability: {
      capability_id: b.capability_id,
      summary: b.summary,
      semantic_tags: [...(b.semantic_tags ?? [])],
      effect: b.effect,
      risk_class: b.risk_class,
    },
    input,
    input_json: JSON.stringify(ctx.input, null, 2),
    input_digest: ctx.inputDigest,
    input_digest_short: shortDigest(ctx.inputDigest),
    resource: ctx.resource ?? null,
    expected_revision: ctx.expectedRevision ?? null,
    permit: {
      required: b.permit?.required === true,
      ttl_ms: permitTtlMs,
      single_use: true,
      approval: b.permit?.approval,
    },
    fidelity_gaps: simulatedish ? [...(d.fidelity?.gaps ?? [])] : null,
    safety_notice: 'MHS.SAFETY.NOT_CERTIFIED',
    estop: { kind: d.estop?.kind, physical_ref: d.estop?.physical_ref ?? null, statement: estopStatement(d) },
  };
}
