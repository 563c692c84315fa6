import type { FastifyRequest } from 'fastify';
import { ErrorCode, HostError } from '../core/index.js';
import type { Caller } from '../openwop/node-registry.js';
import type { TokenRole } from '../policy/tokens.js';

/** An authenticated caller of the REST surface. */
export interface Principal {
  id: string;
  name: string;
  role: TokenRole;
}

/** What the app needs to check bearer tokens (the policy layer's `TokenStore` fits). */
export interface BearerVerifier {
  verify(bearer: string): Promise<Principal | null>;
}

/**
 * Checks `Authorization: Bearer <token>`. Raises `unauthorized` when the header is missing or the token is unknown
 * or revoked; which role may call which route is the route × role table alone (route-auth.ts, issue 20).
 */
export async function principalOf(req: FastifyRequest, verifier: BearerVerifier): Promise<Principal> {
  const h = req.headers.authorization;
  const m = typeof h === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(h) : null;
  if (!m?.[1]) throw new HostError(ErrorCode.UNAUTHORIZED, 'a bearer token is required');
  const who = await verifier.verify(m[1]);
  if (!who) throw new HostError(ErrorCode.UNAUTHORIZED, 'the bearer token is unknown or revoked');
  return who;
}

/** The caller of an authenticated request (set by the app's `onRequest` hook); `unauthorized` without a token. */
export function callerOf(req: FastifyRequest): Caller {
  const p = (req as FastifyRequest & { principal?: Principal }).principal;
  if (!p) throw new HostError(ErrorCode.UNAUTHORIZED, 'a bearer token is required');
  // The route × role table let this role call the route; only an operator acts as one.
  return { principal: p.id, name: p.name, role: p.role === 'operator' ? 'operator' : 'client' };
}
