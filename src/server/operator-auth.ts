import type { FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode, HostError, toHostError } from '../core/index.js';
import type { TokenIdentity, TokenStore } from '../policy/tokens.js';
import { frameworkError } from './request-hygiene.js';

/**
 * Authenticates `Authorization: Bearer <token>` against the token store. Raises `unauthorized`
 * when the header is missing or the token unknown or revoked; the route × role table (route-auth.ts) decides the
 * rest (an `agent` token, the MCP gateway's role, never reads or acts on the operator surface).
 */
export async function authenticate(req: FastifyRequest, tokens: TokenStore): Promise<TokenIdentity> {
  const h = req.headers.authorization;
  const m = typeof h === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(h) : null;
  if (!m?.[1]) throw new HostError(ErrorCode.UNAUTHORIZED, 'a bearer token is required');
  const who = await tokens.verify(m[1]);
  if (!who) throw new HostError(ErrorCode.UNAUTHORIZED, 'the bearer token is unknown or revoked');
  return who;
}

/** Raises `forbidden` unless the identity has the operator role. */
export function requireOperator(who: TokenIdentity): void {
  if (who.role !== 'operator') {
    throw new HostError(ErrorCode.FORBIDDEN, 'this action needs an operator token', { role: who.role });
  }
}

const STATUS: Partial<Record<string, number>> = {
  [ErrorCode.UNAUTHORIZED]: 401,
  [ErrorCode.FORBIDDEN]: 403,
  [ErrorCode.VALIDATION_ERROR]: 400,
  [ErrorCode.NOT_FOUND]: 404,
  [ErrorCode.CONFLICT]: 409,
  [ErrorCode.HOST_POLICY_DENIED]: 403,
  [ErrorCode.HOST_CONNECTOR_DISABLED]: 409,
  [ErrorCode.HOST_ENDPOINT_UNKNOWN]: 404,
  [ErrorCode.HOST_LEDGER_UNAVAILABLE]: 503,
  [ErrorCode.TRANSPORT_DISCONNECTED]: 502,
  [ErrorCode.TRANSPORT_TIMEOUT_POSTSEND]: 504,
  [ErrorCode.TRANSPORT_TIMEOUT_PRESEND]: 503,
};

/** HTTP status of an error code on the operator API. */
export function httpStatus(code: string): number {
  return STATUS[code] ?? (code.startsWith('MHS.HOST.INTERNAL') || code === ErrorCode.INTERNAL ? 500 : 422);
}

/**
 * Fastify error handler writing the envelope `{error, message, details?}`; Fastify's own errors (schema, bad JSON,
 * 413, 415, 404) map exactly as on `/v1` ({@link frameworkError}, issue 16 item 3).
 */
export function operatorErrorHandler(err: unknown, _req: FastifyRequest, reply: FastifyReply): void {
  const fw = frameworkError(err);
  if (fw) return void reply.status(fw.status).type('application/json').send(fw.error.toEnvelope());
  const e = toHostError(err, ErrorCode.INTERNAL);
  void reply.status(httpStatus(e.code)).type('application/json').send(e.toEnvelope());
}
