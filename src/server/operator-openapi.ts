/**
 * OpenAPI 3.1 description of the operator API (`/v1/operator/*`), merged by the app into
 * `/v1/openapi.json`: `paths` and `components` are disjoint from the OpenWOP REST surface.
 */
import { APPROVAL_STATUSES } from '../policy/approval-rules.js';
const err = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/OperatorError' } } },
});
const ok = (description: string, schema: Record<string, unknown> = { type: 'object' }) => ({
  description,
  content: { 'application/json': { schema } },
});
const common = { '401': err('missing or unknown bearer token (`unauthorized`)') };
const mutation = {
  ...common,
  '403': err('a client token on an operator action (`forbidden`)'),
  '400': err('bad body (`validation_error`)'),
};
const json = (schema: Record<string, unknown>) => ({ required: true, content: { 'application/json': { schema } } });
const reason = json({ type: 'object', properties: { reason: { type: 'string', maxLength: 500 } } });
const device = json({
  type: 'object',
  required: ['endpoint_id', 'device_id'],
  properties: { endpoint_id: { type: 'string' }, device_id: { type: 'string' } },
});
const connector = json({
  type: 'object',
  required: ['connector_id'],
  properties: { connector_id: { type: 'string' } },
});
const idParam = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'string' } });

export const operatorOpenApi = {
  paths: {
    '/v1/operator/whoami': {
      get: { summary: 'The identity of the bearer token', responses: { '200': ok('identity'), ...common } },
    },
    '/v1/operator/approvals': {
      get: {
        summary: 'Approval requests (default: pending)',
        parameters: [
          { name: 'status', in: 'query', schema: { type: 'string' }, description: 'comma list or `all`' },
          { name: 'limit', in: 'query', schema: { type: 'integer' } },
        ],
        responses: { '200': ok('approvals'), ...common, '400': err('unknown status') },
      },
    },
    '/v1/operator/approvals/{id}': {
      get: {
        summary: 'One approval request with its HOST-040 view',
        parameters: [idParam('id')],
        responses: {
          '200': ok('approval', { $ref: '#/components/schemas/ApprovalRequest' }),
          ...common,
          '404': err('unknown id'),
        },
      },
    },
    '/v1/operator/approvals/{id}/approve': {
      post: {
        summary: 'Approve (human_click), or give one of the two approvals of dual_control',
        parameters: [idParam('id')],
        requestBody: { ...reason, required: false },
        responses: {
          '200': ok('the updated request'),
          ...mutation,
          '404': err('unknown id'),
          '409': err('already decided (`conflict`)'),
        },
      },
    },
    '/v1/operator/approvals/{id}/deny': {
      post: {
        summary: 'Deny with an optional reason',
        parameters: [idParam('id')],
        requestBody: { ...reason, required: false },
        responses: {
          '200': ok('the updated request'),
          ...mutation,
          '404': err('unknown id'),
          '409': err('already decided'),
        },
      },
    },
    '/v1/operator/permits': {
      get: {
        summary: 'Outstanding permits (all=true: every permit)',
        parameters: [{ name: 'all', in: 'query', schema: { type: 'boolean' } }],
        responses: { '200': ok('permits'), ...common },
      },
    },
    '/v1/operator/permits/{id}/revoke': {
      post: {
        summary: 'Revoke a permit: invalid on the host at once, then revoked on the endpoint',
        parameters: [idParam('id')],
        requestBody: { ...reason, required: false },
        responses: {
          '200': ok('the revoked permit'),
          ...mutation,
          '404': err('unknown permit'),
          '409': err('not outstanding'),
        },
      },
    },
    '/v1/operator/estop': {
      post: {
        summary: 'Trusted e-stop of one device (bypasses pending approvals, not enablement or device binding)',
        requestBody: device,
        responses: {
          '200': ok('outcome: sent | error | hardware_only'),
          ...mutation,
          '409': err('endpoint not enabled'),
        },
      },
    },
    '/v1/operator/estop/allow': {
      post: {
        summary: 'Add a device to (allowed: true) or remove it from the trusted e-stop allow-list (recorded)',
        requestBody: json({
          type: 'object',
          required: ['endpoint_id', 'device_id', 'allowed'],
          properties: { endpoint_id: { type: 'string' }, device_id: { type: 'string' }, allowed: { type: 'boolean' } },
        }),
        responses: { '200': ok('the allowance'), ...mutation, '404': err('unknown device') },
      },
    },
    '/v1/operator/reset': {
      post: {
        summary: 'Operator reset after an e-stop',
        requestBody: device,
        responses: { '200': ok('outcome'), ...mutation },
      },
    },
    '/v1/operator/endpoints': {
      get: {
        summary: 'Endpoints with enablement and the experimental status',
        responses: { '200': ok('endpoints'), ...common },
      },
    },
    '/v1/operator/endpoints/enable': {
      post: {
        summary: 'Enable an endpoint (recorded)',
        requestBody: connector,
        responses: { '200': ok('state'), ...mutation },
      },
    },
    '/v1/operator/endpoints/disable': {
      post: {
        summary: 'Disable an endpoint (recorded)',
        requestBody: connector,
        responses: { '200': ok('state'), ...mutation },
      },
    },
    '/v1/operator/ledger': {
      get: {
        summary:
          'Browse ledger entries, with the store status {state, since, last_error?} (HOST-093); with before, command_id, endpoint_id, device_id, run_id, since or until: up to limit matching entries before `before`, and next_before for the older page',
        parameters: [
          { name: 'from', in: 'query', schema: { type: 'integer' } },
          { name: 'before', in: 'query', schema: { type: 'integer' } },
          { name: 'limit', in: 'query', schema: { type: 'integer' } },
          { name: 'kind', in: 'query', schema: { type: 'string' } },
          { name: 'command_id', in: 'query', schema: { type: 'string' } },
          { name: 'endpoint_id', in: 'query', schema: { type: 'string' } },
          { name: 'device_id', in: 'query', schema: { type: 'string' } },
          { name: 'run_id', in: 'query', schema: { type: 'string' }, description: 'entries carrying this run' },
          {
            name: 'since',
            in: 'query',
            schema: { type: 'string', format: 'date-time' },
            description: 'entries with ts at or after this RFC 3339 date-time',
          },
          {
            name: 'until',
            in: 'query',
            schema: { type: 'string', format: 'date-time' },
            description: 'entries with ts before this RFC 3339 date-time (after since)',
          },
        ],
        responses: {
          '200': ok('entries'),
          ...common,
          '400': err(
            'a bad filter (`validation_error`): since/until not an RFC 3339 date-time, or until not after since',
          ),
        },
      },
    },
    '/v1/operator/gates': {
      get: {
        summary: 'Device gates held in the store (HOST-091), with whether each owning host process is running',
        parameters: [{ name: 'endpoint_id', in: 'query', schema: { type: 'string' } }],
        responses: { '200': ok('gates'), ...common },
      },
    },
    '/v1/operator/devices': {
      get: {
        summary:
          'Every endpoint and device, live (issue 18): connection, e-stop and interlocks from mhs__safety, device gate, mode, risk class; pushed on /events as `devices`',
        responses: { '200': ok('endpoints with their live devices'), ...common },
      },
    },
    '/v1/operator/ledger/verify': {
      post: {
        summary: 'Verify the host chain (recorded as evidence.verify)',
        responses: { '200': ok('chain check'), ...mutation },
      },
    },
    '/v1/operator/ledger/export': {
      post: {
        summary:
          'The evidence package of `mhs-host ledger export` (shared/spec/export-package.md) as one tar of a folder `mhs-evidence-seq<head>` (recorded as evidence.export; operator role)',
        parameters: [
          {
            name: 'session_id',
            in: 'query',
            required: false,
            schema: { type: 'string' },
            description: 'only this session in transcript.jsonl',
          },
        ],
        responses: {
          '200': {
            description:
              'the package; a package with a break is still delivered, `unverified` (HOST-053), naming the break',
            headers: {
              'content-disposition': {
                schema: { type: 'string' },
                description: 'attachment; filename="mhs-evidence-seq<head>.tar"',
              },
              'x-mhs-package-status': { schema: { type: 'string', enum: ['verified', 'unverified'] } },
              'x-mhs-manifest-sha256': { schema: { type: 'string' } },
              'x-mhs-head-seq': { schema: { type: 'string' } },
              'x-mhs-package-break': {
                schema: { type: 'string' },
                description: 'code, file and seq of the break; empty when verified',
              },
            },
            content: { 'application/x-tar': { schema: { type: 'string', format: 'binary' } } },
          },
          '404': err('this host has no store (`not_found`)'),
          ...mutation,
        },
      },
    },
    '/v1/operator/events': {
      get: {
        summary:
          'Server-sent events of approvals, permits, e-stops, enablement, ledger appends and store status, and `devices` (the live device state on every change)',
        responses: { '200': { description: 'event stream', content: { 'text/event-stream': {} } }, ...common },
      },
    },
  },
  components: {
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } },
    schemas: {
      OperatorError: {
        type: 'object',
        required: ['error', 'message'],
        properties: { error: { type: 'string' }, message: { type: 'string' }, details: { type: 'object' } },
      },
      ApprovalRequest: {
        type: 'object',
        required: ['approval_id', 'status', 'method', 'input_digest', 'view'],
        properties: {
          approval_id: { type: 'string' },
          status: { enum: [...APPROVAL_STATUSES] },
          method: { enum: ['human_click', 'policy_rule', 'dual_control'] },
          principals_needed: { type: 'integer' },
          input_digest: { type: 'string' },
          view: { type: 'object' },
        },
      },
    },
  },
  security: [{ bearerAuth: [] }],
} as const;
