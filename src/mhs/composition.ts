/**
 * Composition (`mhs.composition.run`), an experimental extension of this project: OpenMHS 0.9 reserves the method
 * (HOST-084; profiles.md §1) and publishes no wire form, so the form here is ours and may change. A composition is
 * an ordered list of capability calls on one device of one endpoint; its digest is `H(composition)` (RFC 8785),
 * which is also the `input_digest` of the parent command, so one approval and one permit bind the whole list.
 */
import { H } from '../core/index.js';
import type { CompositionExtension, Manifest } from './wire-types.js';

/** The reserved method name, used as the parent command's `capability_id`. */
export const COMPOSITION_CAPABILITY = 'mhs.composition.run';
/** The projection tool that runs a composition (wire contract §4 naming: `mhs__<name>`). */
export const COMPOSITION_TOOL = 'mhs__composition_run';
/** Most steps in one composition. */
export const COMPOSITION_MAX_STEPS = 16;

/** One capability call of a composition. */
export interface CompositionStep {
  device_id: string;
  capability_id: string;
  input: Record<string, unknown>;
}

/** A composition: the parent command's input (without `_mhs`). */
export interface Composition {
  steps: CompositionStep[];
}

/** JSON Schema of a composition (the tool's input without `_mhs`). */
export const COMPOSITION_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['steps'],
  properties: {
    steps: {
      type: 'array',
      minItems: 1,
      maxItems: COMPOSITION_MAX_STEPS,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['device_id', 'capability_id', 'input'],
        properties: {
          device_id: { type: 'string', minLength: 1 },
          capability_id: { type: 'string', minLength: 1 },
          input: { type: 'object' },
        },
      },
    },
  },
} as const;

/** The composition digest: `H(composition)` over the composition without control fields. */
export function compositionDigest(c: Composition): string {
  return H(c);
}

/** The manifest's composition advertisement, or null when the endpoint does not serve the extension. */
export function compositionAdvertised(m: Pick<Manifest, 'extensions'>): CompositionExtension | null {
  const ext = m.extensions?.[COMPOSITION_CAPABILITY];
  return ext && ext.status === 'experimental' && typeof ext.tool === 'string' ? ext : null;
}
