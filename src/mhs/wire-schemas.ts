/**
 * JSON Schemas (draft 2020-12) of the MHS wire contract's objects (`shared/spec/mhs-wire.md`).
 * Compiled once by `validate.ts`. Objects from the endpoint are open (`additionalProperties` allowed)
 * unless the contract fixes their fields, so a newer minor endpoint still validates.
 */

const HEX64 = { type: 'string', pattern: '^[0-9a-f]{64}$' } as const;
const NON_EMPTY = { type: 'string', minLength: 1 } as const;
const TIME = { type: 'string', minLength: 1 } as const;
const NAT = { type: 'integer', minimum: 0 } as const;

const enumOf = (...values: string[]) => ({ type: 'string', enum: values }) as const;

export const MODES = ['simulated', 'hybrid', 'hardware'] as const;
export const RISK_CLASSES = ['R0', 'R1', 'R2', 'R3'] as const;
export const DETERMINISM_KINDS = ['deterministic', 'seeded', 'stochastic', 'physical'] as const;
export const CONFORMANCE_LEVELS = ['CL1', 'CL2', 'CL3', 'CL4', 'CL5'] as const;

const BASE = 'https://mhs-host.local/schemas/';
const ref = (name: string) => ({ $ref: `${BASE}${name}` });

/** §8 MhsError. */
export const mhsErrorSchema = {
  $id: `${BASE}mhs-error`,
  type: 'object',
  required: ['mhs_code', 'message', 'remediation'],
  properties: {
    mhs_code: { type: 'string', pattern: '^MHS\\.[A-Z_]+(\\.[A-Z_]+)*$' },
    message: { type: 'string' },
    remediation: { type: 'string' },
    details: { type: 'object' },
  },
} as const;

/** §2 conformance claim (descriptor and manifest); `null` means "no claim" (HOST-014). */
export const conformanceSchema = {
  $id: `${BASE}conformance`,
  type: 'object',
  required: ['level', 'trust'],
  properties: {
    level: enumOf(...CONFORMANCE_LEVELS),
    trust: enumOf('self', 'verified'),
    report_ref: { type: ['string', 'null'] },
    report_digest: { anyOf: [HEX64, { type: 'null' }] },
  },
} as const;

/** §2 `GET /.well-known/mhs.json`. */
export const descriptorSchema = {
  $id: `${BASE}descriptor`,
  type: 'object',
  required: ['mhs_version', 'endpoint_id', 'display_name', 'transports', 'auth', 'manifest_digest', 'conformance'],
  properties: {
    mhs_version: NON_EMPTY,
    endpoint_id: { type: 'string', pattern: '^[a-z][a-z0-9+.-]*://.+' },
    display_name: { type: 'string' },
    transports: {
      type: 'array',
      minItems: 1,
      items: {
        oneOf: [
          {
            type: 'object',
            required: ['kind', 'url'],
            properties: { kind: { const: 'mcp-http' }, url: { type: 'string', pattern: '^https?://' } },
          },
          {
            type: 'object',
            required: ['kind', 'command'],
            properties: {
              kind: { const: 'mcp-stdio' },
              command: { type: 'array', minItems: 1, items: NON_EMPTY },
            },
          },
        ],
      },
    },
    auth: { type: 'object', required: ['scheme'], properties: { scheme: enumOf('none', 'local', 'bearer') } },
    manifest_digest: HEX64,
    conformance: { anyOf: [ref('conformance'), { type: 'null' }] },
  },
} as const;

/** §3 CapabilityBinding. */
export const capabilityBindingSchema = {
  $id: `${BASE}capability-binding`,
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
    capability_id: NON_EMPTY,
    summary: NON_EMPTY,
    semantic_tags: { type: 'array', items: { type: 'string' } },
    effect: enumOf('read', 'actuate', 'configure'),
    risk_class: enumOf(...RISK_CLASSES),
    resources: { type: 'array', items: { type: 'string' } },
    idempotent: { type: 'boolean' },
    typical_duration_ms: NAT,
    max_duration_ms: NAT,
    permit: {
      type: 'object',
      required: ['required', 'ttl_ms', 'approval'],
      properties: { required: { type: 'boolean' }, ttl_ms: NAT, approval: enumOf('human', 'policy', 'dual') },
    },
    input_schema: { type: 'object' },
    output_schema: { type: 'object' },
  },
} as const;

/** §3 DeviceProfile; `fidelity.gaps` is required for simulated and hybrid devices. */
export const deviceProfileSchema = {
  $id: `${BASE}device-profile`,
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
    device_id: NON_EMPTY,
    instance_id: NON_EMPTY,
    display_name: { type: 'string' },
    summary: NON_EMPTY,
    mode: enumOf(...MODES),
    risk_class: enumOf(...RISK_CLASSES),
    determinism: {
      type: 'object',
      required: ['kind'],
      properties: { kind: enumOf(...DETERMINISM_KINDS), seed: { type: 'integer' } },
    },
    fidelity: {
      type: 'object',
      required: ['gaps'],
      properties: { gaps: { type: 'array', items: { type: 'string' } } },
    },
    estop: {
      type: 'object',
      required: ['kind', 'physical_ref'],
      properties: { kind: enumOf('software', 'both', 'hardware'), physical_ref: { type: ['string', 'null'] } },
      if: { properties: { kind: enumOf('both', 'hardware') } },
      then: { properties: { physical_ref: NON_EMPTY } },
    },
    interlocks: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'state'],
        properties: { id: NON_EMPTY, state: enumOf('closed', 'open', 'unknown') },
      },
    },
    resources: { type: 'array', items: { type: 'string' } },
    capabilities: { type: 'array', items: ref('capability-binding') },
  },
  if: { properties: { mode: enumOf('simulated', 'hybrid') } },
  then: { required: ['fidelity'] },
} as const;

/** §3 Manifest. */
export const manifestSchema = {
  $id: `${BASE}manifest`,
  type: 'object',
  required: [
    'mhs_version',
    'endpoint_id',
    'manifest_version',
    'display_name',
    'safety_notice',
    'conformance',
    'limits',
    'replay',
    'redaction',
    'devices',
    'manifest_digest',
  ],
  properties: {
    mhs_version: NON_EMPTY,
    endpoint_id: { type: 'string', pattern: '^[a-z][a-z0-9+.-]*://.+' },
    manifest_version: NAT,
    display_name: { type: 'string' },
    safety_notice: { const: 'MHS.SAFETY.NOT_CERTIFIED' },
    conformance: { anyOf: [ref('conformance'), { type: 'null' }] },
    limits: {
      type: 'object',
      required: ['max_frame_bytes', 'max_deadline_ms', 'receipt_retention_s', 'max_session_ttl_ms'],
      properties: {
        max_frame_bytes: NAT,
        max_deadline_ms: NAT,
        receipt_retention_s: NAT,
        max_session_ttl_ms: NAT,
      },
    },
    replay: { type: 'object', required: ['supported'], properties: { supported: { type: 'boolean' } } },
    redaction: {
      type: 'object',
      required: ['paths'],
      properties: { paths: { type: 'array', items: { type: 'string' } } },
    },
    devices: { type: 'array', items: ref('device-profile') },
    manifest_digest: HEX64,
  },
} as const;

/** §5 Session. */
export const sessionSchema = {
  $id: `${BASE}session`,
  type: 'object',
  required: [
    'session_id',
    'endpoint_id',
    'device_id',
    'principal',
    'capabilities',
    'mode',
    'opened_at',
    'expires_at',
    'heartbeat_interval_ms',
    'state',
  ],
  properties: {
    session_id: { type: 'string', pattern: '^ses_' },
    endpoint_id: NON_EMPTY,
    device_id: NON_EMPTY,
    principal: {
      type: 'object',
      required: ['kind'],
      properties: { kind: enumOf('agent', 'human', 'system'), id: { type: 'string' } },
    },
    capabilities: { type: 'array', items: { type: 'string' } },
    mode: enumOf('live', 'replay'),
    opened_at: TIME,
    expires_at: TIME,
    heartbeat_interval_ms: NAT,
    state: enumOf('open', 'closed', 'expired'),
  },
} as const;

const evidenceLink = {
  type: 'object',
  required: ['seq', 'prev_digest', 'digest'],
  properties: { seq: NAT, prev_digest: HEX64, digest: HEX64 },
} as const;

/** §6 Receipt. */
export const receiptSchema = {
  $id: `${BASE}receipt`,
  type: 'object',
  required: [
    'mhs_version',
    'receipt_id',
    'command_id',
    'session_id',
    'endpoint_id',
    'device_id',
    'capability_id',
    'mode',
    'status',
    'input_digest',
    'operation_id',
    'revisions',
    'state_hash',
    'effects',
    'output',
    'error',
    'replayed',
    'started_at',
    'finished_at',
    'evidence',
  ],
  properties: {
    mhs_version: NON_EMPTY,
    receipt_id: { type: 'string', pattern: '^rcp_' },
    command_id: { type: 'string', pattern: '^cmd_' },
    session_id: { type: 'string' },
    endpoint_id: NON_EMPTY,
    device_id: NON_EMPTY,
    capability_id: NON_EMPTY,
    mode: enumOf(...MODES, 'replay'),
    status: enumOf('accepted', 'running', 'completed', 'rejected', 'failed', 'unknown'),
    input_digest: HEX64,
    operation_id: { type: ['string', 'null'] },
    revisions: { type: 'object', required: ['before', 'after'], properties: { before: NAT, after: NAT } },
    state_hash: { type: 'string' },
    effects: {
      type: 'array',
      items: {
        type: 'object',
        required: ['resource', 'kind'],
        properties: {
          resource: { type: 'string' },
          kind: { type: 'string' },
          quantity: {
            type: 'object',
            required: ['value', 'unit'],
            properties: { value: { type: 'number' }, unit: { type: 'string' } },
          },
        },
      },
    },
    output: { type: ['object', 'null'] },
    error: { anyOf: [ref('mhs-error'), { type: 'null' }] },
    replayed: { type: 'boolean' },
    started_at: TIME,
    finished_at: { type: ['string', 'null'] },
    evidence: evidenceLink,
  },
  if: { properties: { status: { const: 'running' } } },
  then: { properties: { operation_id: NON_EMPTY } },
} as const;

/** §7 read result. */
export const readResultSchema = {
  $id: `${BASE}read-result`,
  type: 'object',
  required: ['device_id', 'revision', 'state', 'state_hash'],
  properties: { device_id: NON_EMPTY, revision: NAT, state: { type: 'object' }, state_hash: { type: 'string' } },
} as const;

const interlocks = {
  type: 'array',
  items: {
    type: 'object',
    required: ['id', 'state'],
    properties: { id: NON_EMPTY, state: enumOf('closed', 'open', 'unknown') },
  },
} as const;

/** §7 safety status. */
export const safetySchema = {
  $id: `${BASE}safety`,
  type: 'object',
  required: ['device_id', 'estop', 'interlocks', 'notice'],
  properties: {
    device_id: NON_EMPTY,
    estop: {
      type: 'object',
      required: ['kind', 'engaged', 'physical_ref'],
      properties: {
        kind: enumOf('software', 'both', 'hardware'),
        engaged: { type: 'boolean' },
        physical_ref: { type: ['string', 'null'] },
      },
    },
    interlocks,
    notice: { const: 'MHS.SAFETY.NOT_CERTIFIED' },
  },
} as const;

/** §7 Permit. */
export const permitSchema = {
  $id: `${BASE}permit`,
  type: 'object',
  required: ['permit_id', 'session_id', 'capability_id', 'input_digest', 'expires_at', 'single_use', 'state'],
  properties: {
    permit_id: { type: 'string', pattern: '^prm_' },
    session_id: NON_EMPTY,
    capability_id: NON_EMPTY,
    input_digest: HEX64,
    resource: { type: ['string', 'null'] },
    expected_revision: { type: ['integer', 'null'] },
    expires_at: TIME,
    single_use: { const: true },
    state: enumOf('issued', 'consumed', 'revoked', 'expired'),
  },
} as const;

/** §9 evidence entry and bundle. */
export const evidenceBundleSchema = {
  $id: `${BASE}evidence-bundle`,
  type: 'object',
  required: ['endpoint_id', 'genesis_digest', 'head_digest', 'entries'],
  properties: {
    endpoint_id: NON_EMPTY,
    genesis_digest: HEX64,
    head_digest: HEX64,
    entries: {
      type: 'array',
      items: {
        type: 'object',
        required: ['seq', 'prev_digest', 'ts', 'kind', 'body', 'digest'],
        properties: {
          seq: NAT,
          prev_digest: HEX64,
          ts: TIME,
          kind: NON_EMPTY,
          body: { type: 'object' },
          digest: HEX64,
        },
      },
    },
  },
} as const;

/** Every schema, by the name `validate.ts` uses. */
export const WIRE_SCHEMAS = {
  'mhs-error': mhsErrorSchema,
  conformance: conformanceSchema,
  descriptor: descriptorSchema,
  'capability-binding': capabilityBindingSchema,
  'device-profile': deviceProfileSchema,
  manifest: manifestSchema,
  session: sessionSchema,
  receipt: receiptSchema,
  'read-result': readResultSchema,
  safety: safetySchema,
  permit: permitSchema,
  'evidence-bundle': evidenceBundleSchema,
} as const;

/** Name of a wire object kind with a schema. */
export type WireKind = keyof typeof WIRE_SCHEMAS;
