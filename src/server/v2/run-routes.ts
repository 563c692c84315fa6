import type { FastifyInstance } from 'fastify';
import { ErrorCode, HostError } from '../../core/index.js';
import type { OpenwopHost } from '../../openwop/host.js';
import { checkInboundCausation, validTraceparent } from '../../openwop/causation/causation-link.js';
import {
  RUN_LIST_MAX_PAGE,
  bindRunId,
  projectSnapshot,
  runIdFromParam,
  runPathSegment,
  toCreateRunRequest,
} from '../../openwop/v2/index.js';
import { callerOf } from '../auth.js';
import { v2RunDiff } from './diff-route.js';
import { v2IdempotencyKey } from './request-idempotency.js';
import { runOwner } from './run-owner.js';

/** The v2 snapshot of a run, or `not_found`. */
export async function v2Snapshot(host: OpenwopHost, runId: string): Promise<Record<string, unknown>> {
  const stored = await host.store.getRun(runId);
  if (!stored) throw new HostError(ErrorCode.NOT_FOUND, 'run not found');
  const snap = await host.runs.snapshot(runId);
  return projectSnapshot(snap, await runOwner(host, stored), stored.inputs, stored.eventLogSchemaVersion);
}

const encodeCursor = (createdAt: string, runId: string): string =>
  Buffer.from(JSON.stringify(['v2', createdAt, runId])).toString('base64url');

function decodeCursor(cursor: string): { createdAt: string; runId: string } {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === 3 && v[0] === 'v2' && typeof v[1] === 'string' && typeof v[2] === 'string')
      return { createdAt: v[1], runId: v[2] };
  } catch {
    // falls through to the refusal
  }
  throw new HostError(ErrorCode.VALIDATION_ERROR, 'cursor is not one this host minted', { field: 'cursor' });
}

function pageSize(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 50;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1)
    throw new HostError(ErrorCode.VALIDATION_ERROR, 'limit must be a positive integer', { field: 'limit' });
  return Math.min(n, RUN_LIST_MAX_PAGE);
}

/**
 * The major-2 run routes (v2 runs.md): `POST /runs` (closed body, `Idempotency-Key`, `201 {runId, status, eventsUrl,
 * statusUrl}`), `GET /runs/{runId}` (closed snapshot, ETag from the latest sequence, `304`), `GET /runs` (the
 * caller's runs newest first as snapshots, opaque cursor, `workflowId`/`status` filters). Ids are tenant-bound and
 * path-projected (identity.md §5); a v1-minted id resolves the same run.
 */
export function registerV2RunRoutes(app: FastifyInstance, host: OpenwopHost): void {
  app.post('/runs', { config: { operationId: 'createRun' } }, async (req, reply) => {
    const body = toCreateRunRequest(req.body);
    const key = v2IdempotencyKey(req);
    const traceparent = validTraceparent(req.headers.traceparent);
    checkInboundCausation(body.metadata, host.hostId);
    let result;
    try {
      result = await host.runs.createRun(body, callerOf(req), key, traceparent ? { traceparent } : {});
    } catch (err) {
      // The store's only non-retryable create conflict: the key was used with another body.
      if (err instanceof HostError && err.code === ErrorCode.CONFLICT && !err.retryable)
        throw new HostError(ErrorCode.IDEMPOTENCY_KEY_MISMATCH, err.message);
      throw err;
    }
    const { run, created } = result;
    const seg = runPathSegment(run.runId);
    void reply.header('location', `/runs/${seg}`);
    if (run.traceparent) void reply.header('traceresponse', run.traceparent);
    if (!created) void reply.header('openwop-idempotent-replay', 'true');
    return reply.status(201).send({
      runId: bindRunId(run.runId),
      status: run.status,
      eventsUrl: `/runs/${seg}/events`,
      statusUrl: `/runs/${seg}`,
    });
  });

  // The router reads `{runId}:diff` as the one `:runId` parameter, so `diffRun` is matched here.
  app.get<{ Params: { runId: string }; Querystring: Record<string, string | undefined> }>(
    '/runs/:runId',
    { config: { operationId: ['getRun', 'diffRun'] } },
    async (req, reply) => {
      const diff = /^(.+):diff$/.exec(req.params.runId);
      if (diff) return v2RunDiff(host, diff[1]!, req.query.against);
      const snap = await v2Snapshot(host, runIdFromParam(req.params.runId));
      const ext = (snap.extensions as Record<string, { lastSequence: number }>)['mhs-host.run']!;
      // runs.md §Caching: a strong ETag from the latest persisted sequence.
      const etag = `"seq-${ext.lastSequence}"`;
      void reply.header('etag', etag);
      const inm = req.headers['if-none-match'];
      if (typeof inm === 'string' && inm.split(',').some((t) => t.trim().replace(/^W\//, '') === etag))
        return reply.status(304).send();
      return snap;
    },
  );

  app.get<{ Querystring: Record<string, string | undefined> }>(
    '/runs',
    { config: { operationId: 'listRuns' } },
    async (req) => {
      const q = req.query;
      const limit = pageSize(q.limit);
      const rows = await host.store.listRuns({
        limit: limit + 1,
        ...(q.status ? { status: q.status } : {}),
        ...(q.workflowId ? { workflowId: q.workflowId } : {}),
        ...(q.cursor ? { after: decodeCursor(q.cursor) } : {}),
      });
      const page = rows.slice(0, limit);
      const runs = await Promise.all(page.map((r) => v2Snapshot(host, r.runId)));
      const last = page.at(-1);
      return rows.length > limit && last ? { runs, nextCursor: encodeCursor(last.createdAt, last.runId) } : { runs };
    },
  );
}
