import type { FastifyRequest } from 'fastify';
import { ErrorCode, HostError, unencodablePath } from '../core/index.js';

/**
 * Fastify's own failures (bad JSON, a body over the limit, a content type it cannot parse, schema validation,
 * an unknown route) as `{status, error}` in the one envelope, the same on every route (issue 16 item 3); null for
 * anything else (a route's own error). Statuses: 400, 404, 413, 415.
 */
export function frameworkError(err: unknown): { status: number; error: HostError } | null {
  if (err instanceof HostError || !err || typeof err !== 'object') return null;
  const fe = err as { statusCode?: unknown; code?: unknown; message?: unknown; validation?: unknown };
  const message = typeof fe.message === 'string' ? fe.message : 'bad request';
  if (Array.isArray(fe.validation)) {
    const errors = (fe.validation as Array<{ instancePath?: string; message?: string }>).map((v) => ({
      path: v.instancePath ?? '',
      message: v.message ?? '',
    }));
    const e = new HostError(ErrorCode.VALIDATION_ERROR, 'the request does not match its schema', { errors });
    return { status: 400, error: e };
  }
  const status = typeof fe.statusCode === 'number' ? fe.statusCode : 0;
  if (status === 413)
    return {
      status,
      error: new HostError(
        ErrorCode.VALIDATION_ERROR,
        'the request body is too large',
        { reason: 'body_too_large' },
        { remediation: 'Send a smaller body: the limit is the same on every route.' },
      ),
    };
  if (status === 415)
    return {
      status,
      error: new HostError(
        ErrorCode.VALIDATION_ERROR,
        'the request body must be application/json',
        { reason: 'unsupported_media_type' },
        { remediation: 'Send the body as JSON with Content-Type: application/json.' },
      ),
    };
  if (status === 404) return { status, error: new HostError(ErrorCode.NOT_FOUND, message) };
  if (status >= 400 && status < 500) {
    const reason = typeof fe.code === 'string' ? fe.code : 'bad_request';
    return { status: 400, error: new HostError(ErrorCode.VALIDATION_ERROR, message, { path: '/', reason }) };
  }
  return null;
}

/**
 * A `preValidation` hook: API input (body, query, params) holding a string JCS cannot encode (a lone UTF-16
 * surrogate) is refused with `validation_error` before any handler runs, so nothing is written (issue 16 item 3).
 * Raw bodies (the `/mcp` route's buffers) are not JSON and are left to their route.
 */
export async function refuseUnencodableInput(req: FastifyRequest): Promise<void> {
  for (const [where, value] of [
    ['body', req.body],
    ['query', req.query],
    ['params', req.params],
  ] as const) {
    if (Buffer.isBuffer(value) || typeof value === 'string') continue;
    const path = unencodablePath(value);
    if (path === null) continue;
    throw new HostError(
      ErrorCode.VALIDATION_ERROR,
      `the request ${where} holds a string canonical JSON cannot encode (a lone UTF-16 surrogate) at ${path || '/'}`,
      { in: where, path, reason: 'lone_surrogate' },
      { remediation: 'Send well-formed Unicode text: every UTF-16 surrogate must be part of a pair.' },
    );
  }
}
