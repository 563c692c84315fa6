/** Shared test data for the simulator tests. */
import type { FamilyDefinition } from '../../src/sim/family.js';

/** A fifth family, declared only by data. */
export const STIRRER: FamilyDefinition = {
  family: 'stirrer',
  endpoint_display_name: 'Magnetic stirrer (sim)',
  device: {
    device_id: 'stirrer',
    instance_id: 'sim-05',
    display_name: 'Magnetic stirrer',
    summary: 'Stir bar drive; speed changes take 10 ms.',
    mode: 'simulated',
    risk_class: 'R1',
    determinism: { kind: 'deterministic' },
    fidelity: { gaps: ['no vortex model'] },
    estop: { kind: 'software', physical_ref: null },
    interlocks: [],
    resources: ['bar'],
    capabilities: [
      {
        capability_id: 'cap.stir.speed.v1',
        summary: 'Set the stir speed.',
        semantic_tags: ['actuation', 'mixing'],
        effect: 'actuate',
        risk_class: 'R1',
        resources: ['bar'],
        idempotent: true,
        typical_duration_ms: 10,
        max_duration_ms: 1000,
        permit: { required: false, ttl_ms: 60000, approval: 'human' },
        input_schema: {
          type: 'object',
          additionalProperties: false,
          required: ['rpm'],
          properties: { rpm: { type: 'integer', minimum: 0, maximum: 1500, 'x-unit': 'rpm' } },
        },
        output_schema: { type: 'object', properties: { rpm: { type: 'integer', 'x-unit': 'rpm' } } },
      },
    ],
  },
  model: {
    state: { rpm: { initial: 0, resource: 'bar' } },
    capabilities: {
      'cap.stir.speed.v1': {
        duration: { kind: 'fixed', ms: 10 },
        updates: [{ var: 'rpm', op: 'set', input: 'rpm' }],
        output: { rpm: 'rpm' },
      },
    },
  },
};
