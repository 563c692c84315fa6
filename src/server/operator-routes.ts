import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode, HostError, isoAt } from '../core/index.js';
import type { Clock } from '../core/index.js';
import type { AttachStatus } from '../engine/attach-retry.js';
import type { Engine } from '../engine/engine.js';
import type { Db } from '../ledger/db.js';
import type { DurableLedger, Ledger } from '../ledger/ledger-types.js';
import { APPROVAL_STATUSES } from '../policy/approval-rules.js';
import type { ApprovalRequest, ApprovalStatus } from '../policy/approval-rules.js';
import type { EstopAllowList } from '../policy/estop-allow.js';
import type { SafetyActions } from '../policy/estop.js';
import type { OperatorEvents } from '../policy/operator-events.js';
import type { PermitService } from '../policy/permits.js';
import type { PolicyGate } from '../policy/policy-gate.js';
import type { EnablementPort, EndpointDirectory, OperatorLink } from '../policy/ports.js';
import type { TokenIdentity, TokenStore } from '../policy/tokens.js';
import { authenticate, operatorErrorHandler, requireOperator } from './operator-auth.js';
import { createDeviceFeed, reportTransportFailure } from './device-feed.js';
import { evidenceArchive } from './evidence-download.js';
import { allowEstopOnEnable } from './estop-on-enable.js';
import { browseLedger, SCAN_FILTERS } from './ledger-browse.js';
import type { LedgerQuery } from './ledger-browse.js';
import type { EstopOnEnableDeps } from './estop-on-enable.js';
import { openSse } from './operator-sse.js';
import { refuseUnencodableInput } from './request-hygiene.js';

/** What {@link registerOperatorRoutes} needs; all built by the host at start-up. */
export interface OperatorRoutesDeps {
  tokens: TokenStore;
  gate: PolicyGate;
  permits: PermitService;
  safety: SafetyActions;
  /** Operator-managed e-stop allow-list; without it `POST /estop/allow` answers 404. */
  estopAllow?: EstopAllowList;
  ledger: Ledger;
  events: OperatorEvents;
  directory: EndpointDirectory;
  enablement: EnablementPort;
  clock: Clock;
  /** SSE keep-alive comment interval (default 15 000 ms). */
  keepAliveMs?: number;
  /** Attach state of the enabled connectors (`serve`: attached, or retrying with the last error; issue 16). */
  attachments?: () => AttachStatus[];
  /** The engine of this process: endpoint connection state for the devices panel (issue 18). */
  engine?: Engine;
  /** The operator route: the devices panel reads `mhs__safety` (e-stop, interlocks) through it. */
  link?: OperatorLink;
  /** Calls `fn` on every connection or attach change of an endpoint (`HostRuntime.connectionChanges`). */
  connectionChanges?: (fn: () => void) => () => void;
  /** The approval policy: whether enabling a connector also allows its devices' trusted e-stop (HOST-094). */
  policy?: EstopOnEnableDeps['policy'];
  /** Interval of the devices panel's safety re-read while a console watches (default 2000 ms). */
  safetyPollMs?: number;
  /** The store, for the evidence package download (`POST /ledger/export`); without it that route answers 404. */
  db?: Db;
}

declare module 'fastify' {
  interface FastifyRequest {
    operatorIdentity?: TokenIdentity;
  }
}

const reasonBody = {
  type: 'object',
  additionalProperties: false,
  properties: { reason: { type: 'string', maxLength: 500 } },
} as const;
const deviceBody = {
  type: 'object',
  additionalProperties: false,
  required: ['endpoint_id', 'device_id'],
  properties: { endpoint_id: { type: 'string', minLength: 1 }, device_id: { type: 'string', minLength: 1 } },
} as const;
const connectorBody = {
  type: 'object',
  additionalProperties: false,
  required: ['connector_id'],
  properties: { connector_id: { type: 'string', minLength: 1 } },
} as const;

const STATUSES: readonly ApprovalStatus[] = APPROVAL_STATUSES;

function who(req: FastifyRequest): TokenIdentity {
  if (!req.operatorIdentity) throw new HostError(ErrorCode.UNAUTHORIZED, 'not authenticated');
  return req.operatorIdentity;
}

function operator(req: FastifyRequest): TokenIdentity {
  const id = who(req);
  requireOperator(id);
  return id;
}

/**
 * Issue 18 item 3 (approvals with context), read-only: for each listed approval the binding's `input_schema` from
 * the endpoint's stored manifest (null when the directory has no such binding now), and for a pending one the wait
 * limit of this host's policy (`approvalTimeoutMs`) with the time it ends, `created_at` + the limit, and what is left of it by this host's clock. Approvals have
 * no expiry of their own in the store: a request made by another process (the CLI's `--approval-timeout`) may wait
 * for a different limit, so `wait_limit.source` says where the number comes from; null when the policy sets none
 * or cannot be read.
 */
async function approvalContext(
  deps: OperatorRoutesDeps,
): Promise<(a: ApprovalRequest) => { input_schema: Record<string, unknown> | null; wait_limit: WaitLimit | null }> {
  const endpoints = await deps.directory.list().catch(() => []);
  let limitMs: number | null = null;
  try {
    const p = typeof deps.policy === 'function' ? await deps.policy() : deps.policy;
    limitMs = p?.approvalTimeoutMs ?? null;
  } catch {
    limitMs = null;
  }
  const now = deps.clock.now();
  return (a) => {
    const device = endpoints
      .find((e) => e.endpoint_id === a.endpoint_id)
      ?.devices.find((d) => d.device_id === a.device_id);
    const binding = device?.capabilities?.find((c) => c.capability_id === a.capability_id);
    const created = Date.parse(a.created_at);
    const wait_limit =
      a.status === 'pending' && limitMs !== null && Number.isFinite(created)
        ? {
            timeout_ms: limitMs,
            expires_at: isoAt(created + limitMs),
            remaining_ms: created + limitMs - now,
            source: 'policy.approvalTimeoutMs' as const,
          }
        : null;
    return { input_schema: binding?.input_schema ?? null, wait_limit };
  };
}

interface WaitLimit {
  timeout_ms: number;
  expires_at: string;
  /** `expires_at` minus this host's clock at the time of the listing. */
  remaining_ms: number;
  source: 'policy.approvalTimeoutMs';
}

/**
 * Registers the operator API under `/v1/operator/` (issue 6 item 5). Bearer auth on every route:
 * client tokens may read; operator tokens may also approve, deny (and give the second approval of
 * dual control), revoke permits, stop and reset devices, enable and disable endpoints and verify the
 * ledger. Every mutation is recorded with the operator's identity. Errors use the envelope
 * `{error, message, details?}`: 401 `unauthorized`, 403 `forbidden`, 400 `validation_error`,
 * 404 `not_found`, 409 `conflict`.
 */
export async function registerOperatorRoutes(app: FastifyInstance, deps: OperatorRoutesDeps): Promise<void> {
  await app.register(
    async (r) => {
      r.setErrorHandler(operatorErrorHandler);
      r.setNotFoundHandler((_req, reply) => {
        void reply.status(404).send(new HostError(ErrorCode.NOT_FOUND, 'no such operator route').toEnvelope());
      });
      r.addHook('onRequest', async (req) => {
        req.operatorIdentity = await authenticate(req, deps.tokens);
      });
      r.addHook('preValidation', refuseUnencodableInput);
      routes(r, deps);
    },
    { prefix: '/v1/operator' },
  );
}

function routes(r: FastifyInstance, deps: OperatorRoutesDeps): void {
  const { gate, permits, safety, ledger, events, directory, enablement, clock } = deps;
  const feed = createDeviceFeed({
    directory,
    ledger,
    safety,
    events,
    clock,
    ...(deps.engine ? { engine: deps.engine } : {}),
    ...(deps.link ? { link: deps.link } : {}),
    ...(deps.attachments ? { attachments: deps.attachments } : {}),
    ...(deps.connectionChanges ? { connectionChanges: deps.connectionChanges } : {}),
    ...(deps.safetyPollMs !== undefined ? { safetyPollMs: deps.safetyPollMs } : {}),
  });

  r.get('/whoami', async (req) => who(req));

  r.get<{ Querystring: { status?: string; limit?: number } }>(
    '/approvals',
    {
      schema: {
        querystring: {
          type: 'object',
          properties: { status: { type: 'string' }, limit: { type: 'integer', minimum: 1, maximum: 500 } },
        },
      },
    },
    async (req) => {
      const status = req.query.status === 'all' ? undefined : (req.query.status ?? 'pending').split(',');
      if (status?.some((s) => !STATUSES.includes(s as ApprovalStatus))) {
        throw new HostError(ErrorCode.VALIDATION_ERROR, 'unknown status', { allowed: [...STATUSES, 'all'] });
      }
      const list = await gate.list({ status: status as ApprovalStatus[] | undefined, limit: req.query.limit });
      const context = await approvalContext(deps);
      const approvals = await Promise.all(
        list.map(async (a) => ({
          ...a,
          estop_allowed: await safety.allowed(a.endpoint_id, a.device_id),
          ...context(a),
        })),
      );
      return { approvals };
    },
  );

  r.get<{ Params: { id: string } }>('/approvals/:id', async (req) => {
    const a = await gate.get(req.params.id);
    if (!a) throw new HostError(ErrorCode.NOT_FOUND, 'no such approval', { approval_id: req.params.id });
    return a;
  });

  for (const decision of ['approve', 'deny'] as const) {
    r.post<{ Params: { id: string }; Body: { reason?: string } | undefined }>(
      `/approvals/:id/${decision}`,
      { schema: { body: reasonBody } },
      async (req) => {
        const op = operator(req);
        const vote = { principal: { kind: 'human' as const, id: op.id, name: op.name }, decision };
        return gate.vote(req.params.id, req.body?.reason ? { ...vote, reason: req.body.reason } : vote);
      },
    );
  }

  r.get<{ Querystring: { all?: boolean } }>(
    '/permits',
    { schema: { querystring: { type: 'object', properties: { all: { type: 'boolean' } } } } },
    async (req) => ({ permits: await permits.list({ all: req.query.all === true }) }),
  );

  r.post<{ Params: { id: string }; Body: { reason?: string } | undefined }>(
    '/permits/:id/revoke',
    { schema: { body: reasonBody } },
    async (req) => permits.revoke(req.params.id, operator(req), req.body?.reason),
  );

  // An e-stop or reset that could not reach the endpoint also tells its connection to check itself (HOST-082).
  const act = async (
    what: 'estop' | 'reset',
    req: FastifyRequest<{ Body: { endpoint_id: string; device_id: string } }>,
  ) => {
    const out = await safety[what](req.body.endpoint_id, req.body.device_id, operator(req));
    if (out.status === 'error') reportTransportFailure(deps.engine, req.body.endpoint_id, out.error.mhs_code);
    return out;
  };

  r.post<{ Body: { endpoint_id: string; device_id: string } }>(
    '/estop',
    { schema: { body: deviceBody } },
    async (req) => act('estop', req),
  );

  r.post<{ Body: { endpoint_id: string; device_id: string; allowed: boolean } }>(
    '/estop/allow',
    {
      schema: {
        body: {
          ...deviceBody,
          required: ['endpoint_id', 'device_id', 'allowed'],
          properties: { ...deviceBody.properties, allowed: { type: 'boolean' } },
        },
      },
    },
    async (req) => {
      const op = operator(req);
      if (!deps.estopAllow) throw new HostError(ErrorCode.NOT_FOUND, 'no operator-managed e-stop allow-list');
      const { endpoint_id, device_id, allowed } = req.body;
      if (!(await directory.device(endpoint_id, device_id))) {
        throw new HostError(ErrorCode.NOT_FOUND, 'no such device', { endpoint_id, device_id });
      }
      await deps.estopAllow.set(endpoint_id, device_id, allowed, op);
      events.emit('estop', { endpoint_id, device_id, allow_list: allowed, operator: { id: op.id, name: op.name } });
      return { endpoint_id, device_id, allowed: await safety.allowed(endpoint_id, device_id) };
    },
  );

  r.post<{ Body: { endpoint_id: string; device_id: string } }>(
    '/reset',
    { schema: { body: deviceBody } },
    async (req) => act('reset', req),
  );

  r.get('/endpoints', async () => {
    const list = await directory.list();
    const attach = new Map((deps.attachments?.() ?? []).map((a) => [a.connector_id, a]));
    const endpoints = await Promise.all(
      list.map(async (e) => ({
        ...e,
        ...(attach.has(e.connector_id) ? { attachment: attach.get(e.connector_id) } : {}),
        experimental: true as const,
        devices: await Promise.all(
          e.devices.map(async (d) => ({ ...d, estop_allowed: await safety.allowed(e.endpoint_id, d.device_id) })),
        ),
      })),
    );
    return {
      integration: {
        name: 'MHS',
        experimental: true,
        enabled: endpoints.some((e) => e.enabled),
      },
      endpoints,
    };
  });

  // Issue 18 item 1: every endpoint and device, live (connection, e-stop, interlocks, gate); changes are pushed
  // on `/events` as `devices`.
  r.get('/devices', async () => ({ endpoints: await feed.snapshot() }));

  for (const action of ['enable', 'disable'] as const) {
    r.post<{ Body: { connector_id: string } }>(
      `/endpoints/${action}`,
      { schema: { body: connectorBody } },
      async (req) => {
        const op = operator(req);
        const id = req.body.connector_id;
        // The enablement service records operator.enable|disable with this identity (HOST-069).
        const identity = { id: op.name, via: `operator-api:${op.id}` };
        if (action === 'disable') await enablement.disable(id, identity);
        else await enablement.enable(id, identity);
        events.emit(action === 'enable' ? 'endpoint.enabled' : 'endpoint.disabled', {
          connector_id: id,
          operator: { id: op.id, name: op.name },
        });
        // HOST-094: the same operator action allows the devices' trusted e-stop (one click on the devices panel).
        const estop =
          action === 'enable' && deps.estopAllow
            ? await allowEstopOnEnable(
                {
                  directory,
                  estopAllow: deps.estopAllow,
                  safety,
                  clock,
                  ...(deps.policy ? { policy: deps.policy } : {}),
                  ...(deps.attachments ? { attachments: deps.attachments } : {}),
                  ...(deps.connectionChanges ? { connectionChanges: deps.connectionChanges } : {}),
                },
                id,
                op,
              )
            : [];
        if (estop.length) events.emit('estop', { connector_id: id, allow_list: true, devices: estop });
        return {
          connector_id: id,
          enabled: await enablement.isEnabled(id),
          ...(action === 'enable' ? { estop_allowed: estop } : {}),
        };
      },
    );
  }

  r.get<{ Querystring: LedgerQuery }>(
    '/ledger',
    {
      schema: {
        querystring: {
          type: 'object',
          properties: {
            from: { type: 'integer', minimum: 0 },
            before: { type: 'integer', minimum: 0 },
            limit: { type: 'integer', minimum: 1, maximum: 500 },
            kind: { type: 'string' },
            command_id: { type: 'string', minLength: 1 },
            endpoint_id: { type: 'string', minLength: 1 },
            device_id: { type: 'string', minLength: 1 },
            run_id: { type: 'string', minLength: 1 },
            // Issue 18 item 4: a time window; RFC 3339 with a zone, else `validation_error` (path `/since`).
            since: { type: 'string', format: 'date-time' },
            until: { type: 'string', format: 'date-time' },
          },
        },
      },
    },
    async (req) => {
      const head = await ledger.head();
      const q = req.query;
      const limit = q.limit ?? 100;
      // HOST-093: the store's availability as this process sees it (failed writes and lease renewals).
      const d = ledger as Partial<DurableLedger>;
      const status = typeof d.status === 'function' ? { status: d.status() } : {};
      if (SCAN_FILTERS.some((k) => q[k] !== undefined) || q.before !== undefined) {
        // Issue 18 item 4 (ledger browser): up to `limit` matching entries before `before`, newest last.
        const page = await browseLedger(ledger, head.seq, { ...q, limit });
        return { head: { seq: head.seq, digest: head.digest }, ...status, ...page };
      }
      const from = q.from ?? Math.max(0, head.seq - limit + 1);
      let entries = await ledger.range(from, Math.min(head.seq, from + limit - 1));
      if (q.kind) entries = entries.filter((e) => e.kind === q.kind);
      return { head: { seq: head.seq, digest: head.digest }, ...status, from, entries };
    },
  );

  // HOST-091: which devices refuse commands now, for which command, and whether its host process still runs.
  r.get<{ Querystring: { endpoint_id?: string } }>(
    '/gates',
    {
      schema: {
        querystring: { type: 'object', properties: { endpoint_id: { type: 'string', minLength: 1 } } },
      },
    },
    async (req) => {
      const d = ledger as Partial<DurableLedger>;
      if (typeof d.deviceGates !== 'function' || typeof d.ownerRunning !== 'function') return { gates: [] };
      const held = await d.deviceGates(req.query.endpoint_id);
      const running = d.ownerRunning.bind(d);
      return { gates: await Promise.all(held.map(async (g) => ({ ...g, owner_running: await running(g.owner) }))) };
    },
  );

  r.post('/ledger/verify', async (req) => {
    const op = operator(req);
    const check = await ledger.verify();
    const entry = await ledger.append({
      kind: 'evidence.verify',
      scope: 'host-ledger',
      result: check,
      operator: { kind: 'human', id: op.id, name: op.name },
      at: isoAt(clock.now()),
    });
    return { ...check, recorded_seq: entry.seq };
  });

  // Issue 18 item 4: the evidence package of `mhs-host ledger export`, as one tar download (operator role).
  r.post<{ Querystring: { session_id?: string } }>(
    '/ledger/export',
    {
      schema: {
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { session_id: { type: 'string', minLength: 1, maxLength: 200 } },
        },
      },
    },
    async (req, reply) => {
      const op = operator(req);
      if (!deps.db) throw new HostError(ErrorCode.NOT_FOUND, 'this host has no store to export');
      // Issue 21: bundles of endpoints tasks touched since the last collection are collected once, now.
      await deps.engine?.collectPendingEvidence();
      const pkg = await evidenceArchive({
        db: deps.db,
        ledger,
        clock,
        ...(req.query.session_id ? { sessionId: req.query.session_id } : {}),
        // The package left as a download, not to a folder of this host (`out_dir` of the CLI's export).
        record: { out_dir: null, delivered: 'download', operator: { kind: 'human', id: op.id, name: op.name } },
      });
      return reply
        .type('application/x-tar')
        .header('content-disposition', `attachment; filename="${pkg.name}"`)
        .header('x-mhs-package-status', pkg.status)
        .header('x-mhs-manifest-sha256', pkg.manifest_sha256)
        .header('x-mhs-head-seq', String(pkg.head_seq))
        .header(
          'x-mhs-package-break',
          pkg.break ? `${pkg.break.code} ${pkg.break.file} seq ${pkg.break.seq ?? '-'}` : '',
        )
        .send(pkg.body);
    },
  );

  r.get('/events', (req: FastifyRequest, reply: FastifyReply) => {
    openSse(req, reply, events, clock, deps.keepAliveMs ?? 15_000, feed);
  });
}
