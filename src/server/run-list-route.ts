import type { FastifyInstance } from 'fastify';
import { ErrorCode, HostError } from '../core/index.js';
import type { OpenwopHost } from '../openwop/host.js';
import { checkBody } from './request-schemas.js';

interface ListRunsQuery {
  status?: string;
  workflowId?: string;
  limit?: string;
  cursor?: string;
}

interface Cursor {
  createdAt: string;
  runId: string;
}

const encode = (c: Cursor): string => Buffer.from(JSON.stringify([c.createdAt, c.runId])).toString('base64url');

function decode(cursor: string): Cursor {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string')
      return { createdAt: v[0], runId: v[1] };
  } catch {
    // falls through to the refusal
  }
  throw new HostError(ErrorCode.VALIDATION_ERROR, 'cursor is not one this server returned', { path: 'query:cursor' });
}

/**
 * `GET /v1/runs`: runs newest first, filtered by `status` and/or `workflowId`, `limit` 1-200 (default 50), paged
 * with the opaque `nextCursor` of the previous page (null on the last one). Each item is a summary; the snapshot
 * is at `GET /v1/runs/{runId}`.
 */
export function registerRunListRoute(app: FastifyInstance, host: OpenwopHost): void {
  app.get<{ Querystring: ListRunsQuery }>('/v1/runs', async (req) => {
    const q = checkBody<ListRunsQuery>('ListRunsQuery', req.query);
    const limit = q.limit ? Number(q.limit) : 50;
    const rows = await host.store.listRuns({
      limit: limit + 1,
      ...(q.status ? { status: q.status } : {}),
      ...(q.workflowId ? { workflowId: q.workflowId } : {}),
      ...(q.cursor ? { after: decode(q.cursor) } : {}),
    });
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      runs: page.map((r) => ({
        runId: r.runId,
        workflowId: r.workflowId,
        status: r.status,
        parentRunId: r.parentRunId,
        tags: r.tags,
        createdAt: r.createdAt,
        startedAt: r.startedAt,
        completedAt: r.completedAt,
      })),
      nextCursor: rows.length > limit && last ? encode({ createdAt: last.createdAt, runId: last.runId }) : null,
    };
  });
}
