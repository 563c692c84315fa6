/**
 * What a governed call sends: one capability, or a composition (`mhs.composition.run`, experimental, HOST-084) run
 * as one parent command whose input is the composition and whose `input_digest` is the composition digest, so one
 * approval and one permit bind the whole ordered list.
 */
import { ErrorCode, H, HostError, assertJcsEncodable } from '../core/index.js';
import {
  COMPOSITION_CAPABILITY,
  COMPOSITION_SCHEMA,
  compositionAdvertised,
  type Composition,
} from '../mhs/composition.js';
import { capabilityToolName } from '../mhs/tool-names.js';
import { checkWire } from '../mhs/validate.js';
import type { CapabilityBinding, DeviceProfile, Receipt, RiskClass } from '../mhs/wire-types.js';
import type { CallEnv, InvokeRequest } from './call-types.js';
import type { EndpointActor } from './endpoint-actor.js';

/** A resolved, locally validated call. */
export interface CallTarget {
  device: DeviceProfile;
  /** The capability's binding; for a composition, the binding the composition is governed as. */
  binding: CapabilityBinding;
  input: Record<string, unknown>;
  inputDigest: string;
  tool: string;
  /** Capabilities its session needs. */
  sessionCapabilities: string[];
  /** Set for a composition: its digest and step count. */
  composition?: { digest: string; steps: number };
}

/** The input without the control fields: `_mhs` belongs to the host, never to a model (wire contract §4). */
export function stripControl(input: Record<string, unknown>): Record<string, unknown> {
  if (!input || typeof input !== 'object' || Array.isArray(input))
    throw new HostError(ErrorCode.SCHEMA_INVALID_INPUT, 'capability input must be a JSON object', {});
  if (!('_mhs' in input)) return input;
  const { _mhs: _dropped, ...rest } = input;
  return rest;
}

const RISK: RiskClass[] = ['R0', 'R1', 'R2', 'R3'];
const EFFECT: CapabilityBinding['effect'][] = ['read', 'configure', 'actuate'];

/**
 * Resolves and validates a call before any session, approval or intent. Fails with `MHS.SCHEMA.INVALID_INPUT`
 * (unknown device or capability, input against the schema) and, for a composition, `MHS.HOST.COMPOSITION_DISABLED`
 * (host flag off, or the endpoint does not advertise the extension: nothing is sent).
 */
export function resolveTarget(env: CallEnv, ep: EndpointActor, req: InvokeRequest): CallTarget {
  if (req.capabilityId === COMPOSITION_CAPABILITY) return compositionTarget(env, ep, req);
  const { device, binding } = ep.resolve(req.deviceId, req.capabilityId);
  const input = validated(env, ep, device.device_id, binding, stripControl(req.input));
  return {
    device,
    binding,
    input,
    inputDigest: H(input),
    tool: capabilityToolName(device.device_id, binding.capability_id),
    sessionCapabilities: req.sessionCapabilities ?? [binding.capability_id],
  };
}

function validated(
  env: CallEnv,
  ep: EndpointActor,
  deviceId: string,
  binding: Pick<CapabilityBinding, 'capability_id' | 'input_schema'>,
  input: Record<string, unknown>,
): Record<string, unknown> {
  // Issue 16 item 3: input JCS cannot encode is the caller's fault, refused before any digest, session or intent.
  assertJcsEncodable(input, 'capability input', ErrorCode.SCHEMA_INVALID_INPUT, {
    device_id: deviceId,
    capability_id: binding.capability_id,
  });
  env.schemas.validate(
    { manifestDigest: ep.manifest.manifest_digest, deviceId, capabilityId: binding.capability_id },
    binding.input_schema,
    input,
  );
  return input;
}

function compositionTarget(env: CallEnv, ep: EndpointActor, req: InvokeRequest): CallTarget {
  const refuse = (reason: string, remediation: string): HostError =>
    new HostError(
      ErrorCode.HOST_COMPOSITION_DISABLED,
      `composition (${COMPOSITION_CAPABILITY}, experimental) is not available: ${reason}`,
      { endpoint_id: ep.endpointId, reason },
      { remediation },
    );
  if (!env.composition)
    throw refuse('host_disabled', 'enable the experimental composition flag of the host (--enable-composition)');
  const ext = compositionAdvertised(ep.manifest);
  if (!ext)
    throw refuse(
      'endpoint_not_advertised',
      `the endpoint's manifest does not advertise ${COMPOSITION_CAPABILITY}; start it with --enable-composition`,
    );
  const device = ep.manifest.devices.find((d) => d.device_id === req.deviceId);
  if (!device)
    throw new HostError(ErrorCode.SCHEMA_INVALID_INPUT, `endpoint ${ep.endpointId} has no device ${req.deviceId}`, {
      endpoint_id: ep.endpointId,
      device_id: req.deviceId,
    });
  const input = validated(
    env,
    ep,
    device.device_id,
    { capability_id: COMPOSITION_CAPABILITY, input_schema: COMPOSITION_SCHEMA as unknown as Record<string, unknown> },
    stripControl(req.input),
  );
  const composition = input as unknown as Composition;
  if (composition.steps.length > ext.max_steps)
    throw new HostError(ErrorCode.SCHEMA_INVALID_INPUT, `a composition holds at most ${ext.max_steps} steps`, {
      steps: composition.steps.length,
      max_steps: ext.max_steps,
    });
  const bindings = composition.steps.map((s, index) => {
    if (s.device_id !== device.device_id)
      throw new HostError(ErrorCode.SCHEMA_INVALID_INPUT, 'every step of a composition addresses its one device', {
        index,
        device_id: s.device_id,
        expected: device.device_id,
      });
    const { binding } = ep.resolve(s.device_id, s.capability_id);
    validated(env, ep, device.device_id, binding, s.input);
    return binding;
  });
  const caps = [...new Set(bindings.map((b) => b.capability_id))];
  const needsPermit = bindings.filter((b) => b.permit.required);
  const maxMs = bindings.reduce((n, b) => n + b.max_duration_ms, 0);
  // Governed as its strongest step: highest risk and effect, dual approval if any step needs it (HOST-044).
  const binding: CapabilityBinding = {
    capability_id: COMPOSITION_CAPABILITY,
    summary: `Experimental composition of ${bindings.length} calls: ${composition.steps.map((s) => s.capability_id).join(', ')}`,
    semantic_tags: ['composition', ...new Set(bindings.flatMap((b) => b.semantic_tags))],
    effect: EFFECT[Math.max(...bindings.map((b) => EFFECT.indexOf(b.effect)))] as CapabilityBinding['effect'],
    risk_class: RISK[Math.max(...bindings.map((b) => RISK.indexOf(b.risk_class)))] as RiskClass,
    resources: [...new Set(bindings.flatMap((b) => b.resources))],
    idempotent: false,
    typical_duration_ms: bindings.reduce((n, b) => n + b.typical_duration_ms, 0),
    max_duration_ms: maxMs,
    permit: {
      required: needsPermit.length > 0,
      ttl_ms: Math.min(...bindings.map((b) => b.permit.ttl_ms)),
      approval: bindings.some((b) => b.permit.approval === 'dual') ? 'dual' : 'human',
    },
    input_schema: COMPOSITION_SCHEMA as unknown as Record<string, unknown>,
    output_schema: {},
  };
  const digest = H(input);
  return {
    device,
    binding,
    input,
    inputDigest: digest,
    tool: ext.tool,
    sessionCapabilities: caps,
    composition: { digest, steps: bindings.length },
  };
}

/**
 * The child receipts of a composition receipt, each checked against the wire schema and its place (command id
 * `<parent>.<n>`, the composition digest); null when one does not fit (the answer is then not this command's).
 */
export function compositionChildren(receipt: Receipt, commandId: string, digest: string): Receipt[] | null {
  const r = receipt as Receipt & { composition_digest?: unknown; children?: unknown };
  if (r.composition_digest !== digest || !Array.isArray(r.children)) return null;
  const out: Receipt[] = [];
  for (const [i, c] of r.children.entries()) {
    const w = checkWire('receipt', c);
    if (!w.ok || w.value.command_id !== `${commandId}.${i + 1}`) return null;
    out.push(w.value);
  }
  return out;
}
