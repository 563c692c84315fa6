/**
 * Model-facing tool descriptions GENERATED from a capability binding, its device profile and the manifest
 * (HOST-030): every sentence is a template filled from the data, never hand-written prose. The same facts are
 * used to check a description for drift against its schema.
 */
import { H, shortDigest } from '../core/index.js';
import type { CapabilityBinding, DeviceProfile, Manifest } from '../mhs/wire-types.js';

/** One generated statement of a description, keyed so a drift report can name what no longer matches. */
export interface DescriptionFact {
  /** e.g. `effect`, `risk`, `input.setpoint_c`. */
  key: string;
  text: string;
}

const oneLine = (s: string): string => s.replace(/\s+/g, ' ').trim();

/** The binding's input schema as the model sees it: without the `_mhs` control field (wire contract §4, HOST-031). */
export function modelInputSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const copy = JSON.parse(JSON.stringify(schema ?? {})) as Record<string, unknown>;
  const props = copy.properties as Record<string, unknown> | undefined;
  if (props && typeof props === 'object' && '_mhs' in props) delete props._mhs;
  if (Array.isArray(copy.required)) copy.required = (copy.required as unknown[]).filter((r) => r !== '_mhs');
  return copy;
}

function typeOf(p: Record<string, unknown>): string {
  if (Array.isArray(p.type)) return (p.type as unknown[]).join('|');
  if (typeof p.type === 'string') return p.type;
  if (Array.isArray(p.enum)) return 'enum';
  return 'any';
}

/** Range, unit, enum and length facts of one schema property, in a fixed order. */
function fieldDetails(p: Record<string, unknown>): string[] {
  const parts: string[] = [];
  const lo =
    typeof p.minimum === 'number'
      ? `${p.minimum}`
      : typeof p.exclusiveMinimum === 'number'
        ? `>${p.exclusiveMinimum}`
        : null;
  const hi =
    typeof p.maximum === 'number'
      ? `${p.maximum}`
      : typeof p.exclusiveMaximum === 'number'
        ? `<${p.exclusiveMaximum}`
        : null;
  if (lo !== null || hi !== null) parts.push(`range ${lo ?? '…'}..${hi ?? '…'}`);
  if (typeof p['x-unit'] === 'string') parts.push(`unit ${p['x-unit']}`);
  if (Array.isArray(p.enum)) parts.push(`one of ${(p.enum as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`);
  if (typeof p.minLength === 'number') parts.push(`min length ${p.minLength}`);
  if (typeof p.maxLength === 'number') parts.push(`max length ${p.maxLength}`);
  if (typeof p.multipleOf === 'number') parts.push(`multiple of ${p.multipleOf}`);
  if (typeof p.format === 'string') parts.push(`format ${p.format}`);
  return parts;
}

function fieldFacts(schema: Record<string, unknown>, dir: 'input' | 'output'): DescriptionFact[] {
  const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const facts: DescriptionFact[] = [];
  for (const [name, p] of Object.entries(props)) {
    if (name === '_mhs' || !p || typeof p !== 'object') continue;
    const head = [typeOf(p), ...(dir === 'input' ? [required.has(name) ? 'required' : 'optional'] : [])];
    const details = [...head, ...fieldDetails(p)].join(', ');
    const desc = typeof p.description === 'string' ? `: ${oneLine(p.description)}` : '';
    facts.push({ key: `${dir}.${name}`, text: `${dir === 'input' ? 'Input' : 'Output'} ${name} (${details})${desc}.` });
  }
  if (dir === 'input' && !facts.length) facts.push({ key: 'input', text: 'Inputs: none.' });
  if (dir === 'input' && schema.additionalProperties === false)
    facts.push({ key: 'input.closed', text: 'No other input fields are accepted.' });
  return facts;
}

function approvalFact(b: CapabilityBinding): string {
  if (b.permit.required)
    return `Approval: a single-use permit is required (${b.permit.approval} approval, permit ttl ${b.permit.ttl_ms} ms); the call waits for it or is refused.`;
  if (b.risk_class === 'R2' || b.risk_class === 'R3')
    return `Approval: required by host policy for risk class ${b.risk_class}; the call waits for it or is refused.`;
  return `Approval: none required by the binding (risk class ${b.risk_class}, no permit); host policy may still refuse.`;
}

function modeFact(d: DeviceProfile): string {
  if (d.mode === 'hardware') return `Device mode: HARDWARE (real equipment); device risk class ${d.risk_class}.`;
  const gaps = d.fidelity?.gaps ?? [];
  return `Device mode: ${d.mode.toUpperCase()}; determinism ${d.determinism.kind}; fidelity gaps: ${
    gaps.length ? gaps.map(oneLine).join('; ') : 'none declared'
  }; device risk class ${d.risk_class}.`;
}

/**
 * The facts of one capability tool's description, in order. Pure: the same manifest gives the same facts.
 */
export function capabilityFacts(manifest: Manifest, device: DeviceProfile, b: CapabilityBinding): DescriptionFact[] {
  const facts: DescriptionFact[] = [
    {
      key: 'capability',
      text: `Capability ${b.capability_id} of device ${device.device_id} (${oneLine(device.display_name)}) on endpoint ${manifest.endpoint_id}.`,
    },
    { key: 'summary', text: `Manifest summary: ${oneLine(b.summary)}` },
    { key: 'effect', text: `Effect: ${b.effect}.` },
    { key: 'risk', text: `Risk class: ${b.risk_class}.` },
    { key: 'approval', text: approvalFact(b) },
    { key: 'mode', text: modeFact(device) },
  ];
  if (b.semantic_tags.length) facts.push({ key: 'tags', text: `Semantic tags: ${b.semantic_tags.join(', ')}.` });
  if (b.resources.length) facts.push({ key: 'resources', text: `Resources: ${b.resources.join(', ')}.` });
  if (device.interlocks.length)
    facts.push({ key: 'interlocks', text: `Interlocks: ${device.interlocks.map((i) => i.id).join(', ')}.` });
  facts.push({
    key: 'timing',
    text: `Duration: typical ${b.typical_duration_ms} ms, max ${b.max_duration_ms} ms; idempotent: ${b.idempotent ? 'yes' : 'no'}.`,
  });
  facts.push(...fieldFacts(b.input_schema, 'input'));
  facts.push(...fieldFacts(b.output_schema, 'output'));
  facts.push({
    key: 'result',
    text: 'Result: the full MHS receipt (status, revisions, state_hash, effects, output, error with mhs_code and remediation).',
  });
  facts.push({
    key: 'digest',
    text: `[manifest ${shortDigest(manifest.manifest_digest)}, input schema ${shortDigest(H(modelInputSchema(b.input_schema)))}]`,
  });
  return facts;
}

/** Joins facts into the description text. */
export function renderFacts(facts: readonly DescriptionFact[]): string {
  return facts.map((f) => f.text).join(' ');
}

/** One way a description no longer matches its schema and tags. */
export interface DriftIssue {
  key: string;
  expected: string;
}

/**
 * Drift check (HOST-030): the facts that the binding and device imply but the description does not state
 * verbatim, plus `input_schema` when the offered schema is not the binding's schema without `_mhs`.
 * An empty list means the description and schema still match.
 */
export function descriptionDrift(
  tool: { description: string; inputSchema: Record<string, unknown> },
  manifest: Manifest,
  device: DeviceProfile,
  binding: CapabilityBinding,
): DriftIssue[] {
  const issues: DriftIssue[] = capabilityFacts(manifest, device, binding)
    .filter((f) => !tool.description.includes(f.text))
    .map((f) => ({ key: f.key, expected: f.text }));
  const want = modelInputSchema(binding.input_schema);
  if (H(tool.inputSchema) !== H(want)) issues.push({ key: 'input_schema', expected: H(want) });
  return issues;
}
