// Guarantee (issue 20 item 1): authorization is one table of routes × roles, enforced in one place. Against a real
// `mhs-host serve` process over real HTTP, for every route that process registered (its router's own list, read from
// `GET /v1/operator/routes`, which the app fills from Fastify's onRoute hook, never a list in this test), every token
// role and no token at all: no token is 401, a role the table does not allow is 403, an allowed role is neither, and a
// public route never asks. The served list names only routes that have a row in ROUTE_ROLES, and a route registered
// without one stops the app from starting (MHS.HOST.ROUTE_UNMAPPED), so `serve` exits 1 instead of serving it.
import { request } from 'node:http';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/core/index.js';
import { TOKEN_ROLES } from '../../src/policy/tokens.js';
import type { TokenRole } from '../../src/policy/tokens.js';
import { enforceRouteRoles } from '../../src/server/route-auth.js';
import type { RouteGrant } from '../../src/server/route-auth.js';
import { ROUTE_ROLES, routeRoleOf } from '../../src/server/route-roles.js';
import { BACKENDS } from '../ledger/helpers.js';
import type { StoreHandle } from '../ledger/helpers.js';
import { makeToken, serve } from './serve-helpers.js';
import type { Served } from './serve-helpers.js';

/** A concrete path for a router URL: unknown ids for params, `x` for a wildcard, `::` as the literal colon. */
function concrete(url: string): string {
  return url
    .split('::')
    .map((part) => part.replace(/:(\w+)/g, (_, n: string) => `no-such-${n.toLowerCase()}`).replace(/\*/g, 'x'))
    .join(':');
}

/** Major-2 routes are the unversioned ones; they are reached with `OpenWOP-Version: 2` (versioning.md). */
const isV2 = (url: string): boolean =>
  !url.startsWith('/v1') && !url.startsWith('/console') && !url.startsWith('/mcp') && !url.startsWith('/.well-known');

/** One request by node:http (any method), resolved at the response's status line; the body is not waited for. */
function status(base: string, method: string, url: string, token?: string): Promise<number> {
  const withBody = ['POST', 'PUT', 'PATCH'].includes(method);
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(concrete(url), base),
      {
        method,
        headers: {
          accept: url.startsWith('/mcp') ? 'application/json, text/event-stream' : 'application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(isV2(url) ? { 'openwop-version': '2' } : {}),
          ...(withBody ? { 'content-type': 'application/json' } : {}),
        },
      },
      (res) => {
        resolve(res.statusCode ?? 0);
        res.destroy();
      },
    );
    req.on('error', reject);
    // No status line in 3 s is reported as 0, so the matrix names the route instead of hanging.
    req.setTimeout(3_000, () => {
      resolve(0);
      req.destroy();
    });
    req.end(withBody ? '{}' : undefined);
  });
}

// Fetch-style clients cannot send CONNECT (a tunnel, not a request); node:http sends every other method.
const UNSENDABLE = new Set(['CONNECT']);

describe.each(BACKENDS)('route × role matrix on $name', (backend) => {
  describe.each([
    { config: 'default serve', flags: [] as string[] },
    { config: 'serve --prompts --enable-test-seams', flags: ['--prompts', '--enable-test-seams'] },
  ])('$config', ({ flags }) => {
    let h: StoreHandle;
    let srv: Served;
    const tokens = {} as Record<TokenRole, string>;
    let grants: RouteGrant[];

    beforeAll(async () => {
      h = await backend.fresh();
      for (const role of TOKEN_ROLES) tokens[role] = await makeToken(h.location, role, `m-${role}`);
      srv = await serve(h.location, ['--no-workflows', ...flags]);
      const res = await fetch(`${srv.url}/v1/operator/routes`, {
        headers: { authorization: `Bearer ${tokens.operator}` },
      });
      expect(res.status).toBe(200);
      grants = ((await res.json()) as { routes: RouteGrant[] }).routes;
    });
    afterAll(async () => {
      await srv?.stop();
      await h?.cleanup();
    });

    it('serves only routes the table has a row for, with that row’s roles', () => {
      expect(grants.length).toBeGreaterThan(60);
      // Each grant is a row of the table: the method's own row, or the URL's `*` row (routes of every method).
      for (const g of grants) {
        const rows = [routeRoleOf(g.method, g.url), routeRoleOf(g.method, g.url, ROUTE_ROLES, true)];
        expect(
          rows.map((r) => r?.roles),
          `${g.method} ${g.url}`,
        ).toContainEqual(g.roles);
      }
      // The listing is the router's: the operator API, the gateway and both OpenWOP majors are in it.
      for (const must of ['POST /v1/workflows', 'POST /v1/operator/estop', 'POST /mcp', 'GET /runs/:runId'])
        expect(grants.map((g) => `${g.method} ${g.url}`)).toContain(must);
    });

    it('every route × every role and no token answers as the table says', async () => {
      const wrong: string[] = [];
      let asked = 0;
      // One grant's requests (no token, then each role) together: an allowed stream's 3 s silence is paid once per
      // route, not once per role; grants in small batches so the server is not flooded.
      const check = async (g: RouteGrant): Promise<void> => {
        const [none, ...got] = await Promise.all([
          status(srv.url, g.method, g.url),
          ...TOKEN_ROLES.map((role) => status(srv.url, g.method, g.url, tokens[role])),
        ]);
        asked += 1 + got.length;
        if (g.roles === 'public' ? none === 401 || none === 403 : none !== 401)
          wrong.push(`${g.method} ${g.url} without a token: ${none}`);
        TOKEN_ROLES.forEach((role, i) => {
          const allowed = g.roles === 'public' || g.roles.includes(role);
          // An allowed HEAD of an event stream (`GET /v1/operator/events`) opens the stream and sends no status line
          // until its first frame: past authorization, so it counts as let through; a refusal always answers at once.
          const through = got[i] !== 401 && got[i] !== 403 && (got[i] !== 0 || g.method === 'HEAD');
          if (allowed ? !through : got[i] !== 403) wrong.push(`${g.method} ${g.url} as ${role}: ${got[i]}`);
        });
      };
      const sendable = grants.filter((g) => !UNSENDABLE.has(g.method));
      for (let i = 0; i < sendable.length; i += 8) await Promise.all(sendable.slice(i, i + 8).map(check));
      expect(wrong).toEqual([]);
      expect(asked).toBeGreaterThan(300);
    }, 240_000);
  });
});

describe('a route without a row in the table', () => {
  const verifier = { verify: async () => ({ id: 't1', name: 'op', role: 'operator' as const }) };

  it('stops the app from starting with MHS.HOST.ROUTE_UNMAPPED naming it', async () => {
    const app = Fastify();
    enforceRouteRoles(app, verifier);
    app.get('/v1/runs', () => ({}));
    app.post('/v1/not-in-the-table', () => ({}));
    await expect(app.ready()).rejects.toMatchObject({
      code: ErrorCode.HOST_ROUTE_UNMAPPED,
      details: { routes: ['POST /v1/not-in-the-table'] },
    });
    await app.close();
  });
});
