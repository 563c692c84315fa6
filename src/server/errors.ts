import type { FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode, HostError, toHostError } from '../core/index.js';
import { frameworkError } from './request-hygiene.js';

const STATUS: Partial<Record<string, number>> = {
  [ErrorCode.VALIDATION_ERROR]: 400,
  [ErrorCode.INVALID_ARGUMENT]: 400,
  [ErrorCode.FORCE_ENGINE_VERSION_FORBIDDEN]: 403,
  [ErrorCode.UNSUPPORTED_FORCE_ENGINE_VERSION]: 400,
  [ErrorCode.MOCK_PROVIDER_FORBIDDEN]: 403,
  [ErrorCode.CREDENTIAL_FORBIDDEN]: 403,
  [ErrorCode.UNSUPPORTED_MOCK_PROVIDER]: 400,
  [ErrorCode.UNAUTHORIZED]: 401,
  [ErrorCode.FORBIDDEN]: 403,
  [ErrorCode.NOT_FOUND]: 404,
  [ErrorCode.CONFLICT]: 409,
  [ErrorCode.HOST_POLICY_DENIED]: 403,
  [ErrorCode.HOST_LEDGER_UNAVAILABLE]: 503,
  [ErrorCode.HOST_RUN_REQUEST_PENDING]: 503,
  [ErrorCode.HOST_ENDPOINT_FORWARD_TIMEOUT]: 503,
  [ErrorCode.HOST_ENDPOINT_LEASE_LOST]: 503,
  [ErrorCode.CAPABILITY_NOT_PROVIDED]: 501,
  [ErrorCode.PROMPT_REF_INVALID]: 400,
  [ErrorCode.PROMPT_VARIABLE_UNRESOLVED]: 400,
  [ErrorCode.CONVERSATION_SPEAKER_NOT_PARTICIPANT]: 422,
  [ErrorCode.CONVERSATION_ROSTER_EXCEEDED]: 422,
  [ErrorCode.REPLAY_DIVERGED_AT_REFUSAL]: 422,
  [ErrorCode.ENVELOPE_REFUSAL]: 422,
  [ErrorCode.ENVELOPE_INVALID]: 422,
  [ErrorCode.FORK_POINT_INVALID]: 422,
  [ErrorCode.INTEROP_VERSION_UNSUPPORTED]: 400,
  [ErrorCode.INTERRUPT_INVALIDATED]: 410,
  [ErrorCode.UNSUPPORTED_STREAM_MODE]: 400,
};

/** HTTP status for an error code on the OpenWOP REST surface (unknown codes: 500). */
export function statusFor(code: string): number {
  return STATUS[code] ?? 500;
}

/**
 * Maps anything thrown by a route, or by Fastify itself (bad JSON, oversized body, unknown route),
 * to the envelope `{error, message, details?}` with a matching status ({@link frameworkError}).
 */
export function errorHandler(err: unknown, _req: FastifyRequest, reply: FastifyReply): void {
  let e: HostError;
  let status: number;
  const fw = frameworkError(err);
  if (err instanceof HostError) {
    e = err;
    status = statusFor(e.code);
  } else if (fw) {
    e = fw.error;
    status = fw.status;
  } else {
    e = toHostError(err, ErrorCode.INTERNAL);
    status = 500;
  }
  void reply.status(status).type('application/json').send(e.toEnvelope());
}

/** 404 envelope for unknown routes. */
export function notFoundHandler(req: FastifyRequest, reply: FastifyReply): void {
  void reply
    .status(404)
    .send(new HostError(ErrorCode.NOT_FOUND, `no route ${req.method} ${req.url.split('?')[0]}`).toEnvelope());
}
