/** JSON Schema (2020-12) of a device family file (see family.ts and docs/simulators.md). */

const NUM = { type: 'number' };
const STR = { type: 'string', minLength: 1 };

const binding = {
  type: 'object',
  required: [
    'capability_id',
    'summary',
    'semantic_tags',
    'effect',
    'risk_class',
    'resources',
    'idempotent',
    'typical_duration_ms',
    'max_duration_ms',
    'permit',
    'input_schema',
    'output_schema',
  ],
  properties: {
    capability_id: { type: 'string', pattern: '^cap\\.[a-z0-9_.]+\\.v[0-9]+$' },
    summary: STR,
    semantic_tags: { type: 'array', items: STR },
    effect: { enum: ['read', 'actuate', 'configure'] },
    risk_class: { enum: ['R0', 'R1', 'R2', 'R3'] },
    resources: { type: 'array', items: STR },
    idempotent: { type: 'boolean' },
    typical_duration_ms: { type: 'integer', minimum: 0 },
    max_duration_ms: { type: 'integer', minimum: 1 },
    permit: {
      type: 'object',
      required: ['required', 'ttl_ms', 'approval'],
      properties: {
        required: { type: 'boolean' },
        ttl_ms: { type: 'integer', minimum: 1 },
        approval: { enum: ['human', 'policy', 'dual'] },
      },
    },
    input_schema: { type: 'object', required: ['type'], properties: { type: { const: 'object' } } },
    output_schema: { type: 'object' },
  },
};

const device = {
  type: 'object',
  required: [
    'device_id',
    'instance_id',
    'display_name',
    'summary',
    'mode',
    'risk_class',
    'determinism',
    'estop',
    'interlocks',
    'resources',
    'capabilities',
  ],
  properties: {
    device_id: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]*$' },
    instance_id: STR,
    display_name: STR,
    summary: STR,
    mode: { enum: ['simulated', 'hybrid', 'hardware'] },
    risk_class: { enum: ['R0', 'R1', 'R2', 'R3'] },
    determinism: {
      type: 'object',
      required: ['kind'],
      properties: { kind: { enum: ['deterministic', 'seeded', 'stochastic', 'physical'] }, seed: { type: 'integer' } },
    },
    fidelity: { type: 'object', required: ['gaps'], properties: { gaps: { type: 'array', items: STR } } },
    estop: {
      type: 'object',
      required: ['kind', 'physical_ref'],
      properties: { kind: { enum: ['software', 'both', 'hardware'] }, physical_ref: { type: ['string', 'null'] } },
    },
    interlocks: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'state'],
        properties: { id: STR, state: { enum: ['closed', 'open', 'unknown'] } },
      },
    },
    resources: { type: 'array', items: STR },
    capabilities: { type: 'array', minItems: 1, items: binding },
  },
};

const update = {
  type: 'object',
  required: ['var', 'op'],
  additionalProperties: false,
  properties: {
    var: STR,
    op: { enum: ['set', 'add', 'sub'] },
    input: STR,
    value: NUM,
    factor: NUM,
    noise: { type: 'number', minimum: 0 },
    min: NUM,
    max: NUM,
    min_var: STR,
    max_var: STR,
  },
};

const duration = {
  oneOf: [
    {
      type: 'object',
      required: ['kind', 'ms'],
      properties: { kind: { const: 'fixed' }, ms: { type: 'number', minimum: 0 } },
    },
    {
      type: 'object',
      required: ['kind', 'input', 'ms_per_unit'],
      properties: { kind: { const: 'per_unit' }, input: STR, ms_per_unit: NUM, base_ms: NUM },
    },
    {
      type: 'object',
      required: ['kind', 'var', 'input', 'units_per_s'],
      properties: {
        kind: { const: 'approach' },
        var: STR,
        input: STR,
        units_per_s: { type: 'number', exclusiveMinimum: 0 },
        base_ms: NUM,
      },
    },
  ],
};

/** Schema of a whole family file. */
export const FAMILY_SCHEMA = {
  type: 'object',
  required: ['family', 'endpoint_display_name', 'device', 'model'],
  properties: {
    family: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]*$' },
    endpoint_display_name: STR,
    device,
    model: {
      type: 'object',
      required: ['state', 'capabilities'],
      properties: {
        state: {
          type: 'object',
          additionalProperties: {
            type: 'object',
            required: ['initial'],
            properties: { initial: { type: ['number', 'boolean', 'string'] }, resource: STR },
          },
        },
        capabilities: {
          type: 'object',
          additionalProperties: {
            type: 'object',
            additionalProperties: false,
            properties: {
              duration,
              updates: { type: 'array', items: update },
              effects: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['resource', 'kind'],
                  properties: { resource: STR, kind: STR, input: STR, factor: NUM, unit: STR },
                },
              },
              output: { type: 'object', additionalProperties: STR },
              interlocks: { type: 'array', items: STR },
            },
          },
        },
      },
    },
  },
} as const;
