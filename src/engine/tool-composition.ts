/**
 * The experimental composition tools of the model/gateway surface (HOST-084; reserved in OpenMHS 0.9): one tool
 * `mhs__composition__<device_id>` per device of an endpoint whose manifest advertises `mhs.composition.run`, listed
 * only when the host's experimental composition flag is on. A call runs the whole ordered list through the governed
 * path as one command (one approval and one permit over the composition digest).
 */
import { sha256Hex } from '../core/index.js';
import { COMPOSITION_CAPABILITY, COMPOSITION_MAX_STEPS, compositionAdvertised } from '../mhs/composition.js';
import type { Manifest, RiskClass } from '../mhs/wire-types.js';
import type { ModelTool } from './tool-surface.js';

const RISK: RiskClass[] = ['R0', 'R1', 'R2', 'R3'];

/** Tool name of a device's composition tool (wire contract §4 character rules, 64 characters at most). */
export function compositionToolName(deviceId: string): string {
  const raw = `mhs__composition__${deviceId}`.replace(/[^A-Za-z0-9_-]/g, '_');
  return raw.length <= 64 ? raw : `${raw.slice(0, 57)}_${sha256Hex(raw).slice(0, 6)}`;
}

/** The composition tools of one manifest: none unless it advertises the extension. */
export function compositionTools(manifest: Manifest): ModelTool[] {
  const ext = compositionAdvertised(manifest);
  if (!ext) return [];
  return manifest.devices.map((d) => {
    const caps = d.capabilities.map((c) => c.capability_id);
    const risk = RISK[Math.max(...d.capabilities.map((c) => RISK.indexOf(c.risk_class)))] ?? d.risk_class;
    const tool: ModelTool = {
      name: compositionToolName(d.device_id),
      description:
        `EXPERIMENTAL composition (${COMPOSITION_CAPABILITY}, reserved in OpenMHS 0.9) on ${d.display_name} ` +
        `(${d.device_id}, endpoint ${manifest.endpoint_id}, ${d.mode.toUpperCase()}, risk class up to ${risk}): runs ` +
        `up to ${Math.min(ext.max_steps, COMPOSITION_MAX_STEPS)} capability calls of this device in order, stopping ` +
        'at the first that does not complete. One approval and one permit cover the whole list (its digest). ' +
        `Each step's input follows that capability's schema and units (see mhs__devices). Capabilities: ${caps.join(', ')}. ` +
        'MHS is not a safety channel (MHS.SAFETY.NOT_CERTIFIED).',
      inputSchema: {
        type: 'object',
        additionalProperties: false,
        required: ['steps'],
        properties: {
          steps: {
            type: 'array',
            minItems: 1,
            maxItems: Math.min(ext.max_steps, COMPOSITION_MAX_STEPS),
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['device_id', 'capability_id', 'input'],
              properties: {
                device_id: { const: d.device_id },
                capability_id: { enum: caps },
                input: { type: 'object', description: "the capability's input (its schema and units)" },
              },
            },
          },
        },
      },
      kind: 'composition',
      annotations: {
        readOnly: false,
        approvalRequired: true,
        riskClass: risk,
        destructive: true,
      },
      target: {
        endpointId: manifest.endpoint_id,
        deviceId: d.device_id,
        capabilityId: COMPOSITION_CAPABILITY,
        manifestDigest: manifest.manifest_digest,
      },
    };
    return freezeDeep(tool);
  });
}

function freezeDeep<T>(v: T): T {
  if (v && typeof v === 'object') {
    for (const x of Object.values(v)) freezeDeep(x);
    Object.freeze(v);
  }
  return v;
}
