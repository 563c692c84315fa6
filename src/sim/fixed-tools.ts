/**
 * The fixed agent tools (wire contract §4, TPT-044), `mhs__session`, and the operator tools that
 * exist only with `--operator-tools` (CORE-130), as data: name, schema, handler.
 */
import { ErrorCode, HostError } from '../core/index.js';
import { COMPOSITION_CAPABILITY } from '../mhs/composition.js';
import type { ControlFields } from '../mhs/wire-types.js';
import type { SimDevice } from './device.js';
import type { SimEndpoint } from './endpoint.js';
import { CONTROL_SCHEMA } from './validation.js';

/** The permit terms of a composition on `device`: the shortest permit ttl of its bindings. */
function compositionPermitBinding(device: SimDevice): { permit: { ttl_ms: number } } {
  const ttls = device.profile.capabilities.map((c) => c.permit.ttl_ms);
  return { permit: { ttl_ms: Math.min(...ttls) } };
}

/** Per-connection context of a tool call. */
export interface ToolContext {
  connectionKey: string;
}

/** One MCP tool of the projection. */
export interface ToolDef {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** HOST-090: false for tools that stay available while `allow_hardware` is false. */
  capability?: boolean;
  run(args: Record<string, unknown>, ctx: ToolContext): Promise<Record<string, unknown>> | Record<string, unknown>;
}

const ID = { type: 'string', minLength: 1, maxLength: 200 };
const DEVICE = { device_id: { ...ID, description: 'Device id from the manifest' } };

function obj(properties: Record<string, unknown>, required: string[] = [], extra: Record<string, unknown> = {}) {
  return {
    type: 'object',
    additionalProperties: false,
    properties: { ...properties, _mhs: CONTROL_SCHEMA },
    required,
    ...extra,
  };
}

const SESSION_SCHEMA = obj(
  {
    action: { enum: ['open', 'heartbeat', 'close'] },
    device_id: ID,
    capabilities: { type: 'array', items: ID, maxItems: 100 },
    ttl_ms: { type: 'integer', minimum: 1, maximum: 86_400_000, 'x-unit': 'ms' },
    principal: {
      type: 'object',
      required: ['kind'],
      additionalProperties: false,
      properties: { kind: { enum: ['agent', 'human', 'system'] }, id: ID },
    },
    mode: { enum: ['live', 'replay'] },
    session_id: ID,
  },
  ['action'],
  {
    allOf: [
      { if: { properties: { action: { const: 'open' } } }, then: { required: ['device_id'] } },
      { if: { properties: { action: { enum: ['heartbeat', 'close'] } } }, then: { required: ['session_id'] } },
    ],
  },
);

const PERMIT_SCHEMA = obj(
  {
    action: { enum: ['issue', 'revoke'] },
    session_id: ID,
    capability_id: ID,
    input_digest: { type: 'string', pattern: '^[0-9a-f]{64}$' },
    resource: ID,
    expected_revision: { type: 'integer', minimum: 0 },
    ttl_ms: { type: 'integer', minimum: 1, 'x-unit': 'ms' },
    approval_ref: {},
    permit_id: ID,
  },
  ['action'],
  {
    allOf: [
      {
        if: { properties: { action: { const: 'issue' } } },
        then: { required: ['session_id', 'capability_id', 'input_digest', 'ttl_ms', 'approval_ref'] },
      },
      { if: { properties: { action: { const: 'revoke' } } }, then: { required: ['permit_id'] } },
    ],
  },
);

function control(args: Record<string, unknown>): ControlFields {
  return (args['_mhs'] as ControlFields | undefined) ?? {};
}

/** The fixed tools plus, when `operatorTools`, `mhs__permit` and `mhs__reset`. */
export function fixedTools(ep: SimEndpoint, operatorTools: boolean): ToolDef[] {
  const tools: ToolDef[] = [
    {
      name: 'mhs__devices',
      description: 'List the devices of this MHS endpoint (id, name, mode, risk class, capabilities).',
      inputSchema: obj({}),
      run: () => ep.devicesList(),
    },
    {
      name: 'mhs__inspect',
      description: 'Without device_id: the endpoint manifest. With device_id: that device profile.',
      inputSchema: obj({ ...DEVICE }),
      run: (a) => ep.inspect(a['device_id'] as string | undefined),
    },
    {
      name: 'mhs__read',
      description: 'Read device state {device_id, revision, state, state_hash}; resource "_counters" gives executions.',
      inputSchema: obj({ ...DEVICE, resource: ID }, ['device_id']),
      capability: true,
      run: (a) => ep.read(a['device_id'] as string, a['resource'] as string | undefined),
    },
    {
      name: 'mhs__safety',
      description: 'Safety status of a device: e-stop kind and state, interlocks. MHS is not a safety channel.',
      inputSchema: obj({ ...DEVICE }, ['device_id']),
      run: (a) => ep.safety(a['device_id'] as string) as unknown as Record<string, unknown>,
    },
    {
      name: 'mhs__operations',
      description: 'Current receipt of a command, by operation_id or command_id.',
      inputSchema: obj({ operation_id: ID, command_id: ID }, [], {
        anyOf: [{ required: ['operation_id'] }, { required: ['command_id'] }],
      }),
      capability: true,
      run: async (a) =>
        (await ep.operation({
          operation_id: a['operation_id'] as string | undefined,
          command_id: a['command_id'] as string | undefined,
        })) as unknown as Record<string, unknown>,
    },
    {
      name: 'mhs__evidence',
      description: 'Endpoint evidence chain: action "export" returns the bundle, "verify" recomputes it.',
      inputSchema: obj({ action: { enum: ['export', 'verify'] } }, ['action']),
      run: (a) =>
        (a['action'] === 'export' ? ep.evidence.export() : ep.evidence.verify()) as unknown as Record<string, unknown>,
    },
    {
      name: 'mhs__estop',
      description: 'Engage the software e-stop of a device; later capability calls are rejected until reset.',
      inputSchema: obj({ ...DEVICE }, ['device_id']),
      run: (a) => {
        const c = control(a);
        if (c.session_id !== undefined) ep.sessions.use(c.session_id);
        return ep.estop(a['device_id'] as string, c.session_id, c.command_id) as unknown as Record<string, unknown>;
      },
    },
    {
      name: 'mhs__session',
      description: 'Open, heartbeat or close a session scoped to one device and a list of capabilities.',
      inputSchema: SESSION_SCHEMA,
      run: (a) => ep.session(a) as unknown as Record<string, unknown>,
    },
  ];
  if (!operatorTools) return tools;
  tools.push(
    {
      name: 'mhs__permit',
      description:
        'Operator only: issue a single-use permit bound to a session, capability and input digest, or revoke one.',
      inputSchema: PERMIT_SCHEMA,
      run: (a) => {
        if (a['action'] === 'revoke')
          return ep.permits.revoke(a['permit_id'] as string) as unknown as Record<string, unknown>;
        const session = ep.sessions.use(a['session_id'] as string);
        const capId = a['capability_id'] as string;
        // A composition's one permit binds its digest (experimental, HOST-084); its ttl is the shortest of the device's.
        const composition = capId === COMPOSITION_CAPABILITY && ep.opts.composition === true;
        const device = ep.device(session.device_id);
        const binding = composition ? compositionPermitBinding(device) : device.binding(capId);
        if (!binding || (!composition && !session.capabilities.includes(capId))) {
          throw new HostError(ErrorCode.SESSION_SCOPE, `capability ${capId} is outside the session`, {
            session_id: session.session_id,
            capability_id: capId,
          });
        }
        return ep.permits.issue({
          sessionId: session.session_id,
          capabilityId: capId,
          inputDigest: a['input_digest'] as string,
          resource: a['resource'] as string | undefined,
          expectedRevision: a['expected_revision'] as number | undefined,
          ttlMs: Math.min(a['ttl_ms'] as number, binding.permit.ttl_ms),
          approvalRef: a['approval_ref'],
        }) as unknown as Record<string, unknown>;
      },
    },
    {
      name: 'mhs__reset',
      description: 'Operator only: clear the e-stop of a device; optionally set interlock states (simulated).',
      inputSchema: obj(
        { ...DEVICE, interlocks: { type: 'object', additionalProperties: { enum: ['closed', 'open', 'unknown'] } } },
        ['device_id'],
      ),
      run: (a) =>
        ep.reset(
          a['device_id'] as string,
          a['interlocks'] as Record<string, 'closed' | 'open' | 'unknown'> | undefined,
        ) as unknown as Record<string, unknown>,
    },
  );
  return tools;
}
