/**
 * The one place a token's role is checked (issue 20 item 1): each route as it is registered gets a route-level
 * `onRequest` hook that allows it by its row in {@link ROUTE_ROLES}. Route-level hooks run after the app's and the
 * plugins' own (version negotiation, authentication), so a version refusal still comes first.
 */
import type { FastifyInstance, FastifyRequest, onRequestHookHandler, RouteOptions } from 'fastify';
import { ErrorCode, HostError } from '../core/index.js';
import type { TokenRole } from '../policy/tokens.js';
import type { BearerVerifier } from './auth.js';
import { ROUTE_ROLES, routeRoleOf } from './route-roles.js';
import type { RouteAccess, RouteRoleRow } from './route-roles.js';

/** A registered route with the access its table row gives it (`GET /v1/operator/routes` lists these). */
export interface RouteGrant {
  method: string;
  url: string;
  roles: RouteAccess;
}

type Authed = FastifyRequest & { principal?: { role: TokenRole }; operatorIdentity?: { role: TokenRole } };

/** The caller's role: from the authentication hook already run, else from the bearer token; 401 without one. */
async function roleOf(req: Authed, auth: BearerVerifier): Promise<TokenRole> {
  const known = req.principal ?? req.operatorIdentity;
  if (known) return known.role;
  const h = req.headers.authorization;
  const m = typeof h === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(h) : null;
  if (!m?.[1]) throw new HostError(ErrorCode.UNAUTHORIZED, 'a bearer token is required');
  const who = await auth.verify(m[1]);
  if (!who) throw new HostError(ErrorCode.UNAUTHORIZED, 'the bearer token is unknown or revoked');
  return who.role;
}

const hooksOf = (h: RouteOptions['onRequest']): onRequestHookHandler[] =>
  h === undefined ? [] : Array.isArray(h) ? [...(h as onRequestHookHandler[])] : [h as onRequestHookHandler];

/**
 * Enforces `table` on every route registered on `app` from now on (call it before any route). A route with no row
 * is refused 403 at request time and, since the host must not serve what no one decided on, fails `app.ready()`
 * (so `serve` does not start) with `MHS.HOST.ROUTE_UNMAPPED` naming every such route. Returns the live list of
 * registered routes with their access.
 */
export function enforceRouteRoles(
  app: FastifyInstance,
  auth: BearerVerifier,
  table: readonly RouteRoleRow[] = ROUTE_ROLES,
): readonly RouteGrant[] {
  const granted: RouteGrant[] = [];
  const unmapped: string[] = [];
  app.addHook('onRoute', (r: RouteOptions) => {
    const methods = Array.isArray(r.method) ? r.method : [r.method];
    // `app.all` and the like register many methods in one route: the URL's `*` row, when there is one.
    const anyMethod = methods.length > 3;
    const rows = new Map<string, RouteRoleRow | undefined>();
    for (const method of methods) {
      const row = routeRoleOf(method, r.url, table, anyMethod);
      rows.set(method, row);
      if (row) granted.push({ method, url: r.url, roles: row.roles });
      else unmapped.push(`${method} ${r.url}`);
    }
    const url = r.url;
    const check: onRequestHookHandler = async (req) => {
      const row = rows.get(req.method) ?? (req.method === 'HEAD' ? rows.get('GET') : undefined);
      if (!row)
        throw new HostError(ErrorCode.FORBIDDEN, 'this route has no entry in the route × role table', {
          route: `${req.method} ${url}`,
        });
      if (row.roles === 'public') return;
      const role = await roleOf(req as Authed, auth);
      if (!row.roles.includes(role))
        throw new HostError(ErrorCode.FORBIDDEN, `a ${role} token may not call ${req.method} ${url}`, {
          role,
          allowed: [...row.roles],
        });
    };
    r.onRequest = [...hooksOf(r.onRequest), check];
  });
  app.addHook('onReady', async () => {
    if (unmapped.length)
      throw new HostError(
        ErrorCode.HOST_ROUTE_UNMAPPED,
        `routes without an entry in the route × role table: ${unmapped.join(', ')}`,
        { routes: [...unmapped] },
      );
  });
  return granted;
}

/** The OpenAPI description of `GET /v1/operator/routes` (registered by `buildApp`). */
export const routesOpenApiPaths = {
  '/v1/operator/routes': {
    get: {
      summary:
        'The route × role table as served (issue 20): every route this process registered, with the token roles that may call it (`public`: no token)',
      responses: {
        '200': { description: 'routes', content: { 'application/json': { schema: { type: 'object' } } } },
        '401': { description: 'unauthorized' },
        '403': { description: 'forbidden (an agent token)' },
      },
    },
  },
} as const;
