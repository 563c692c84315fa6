import { createHash } from 'node:crypto';
import Fastify from 'fastify';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../core/index.js';
import type { OpenwopHost } from '../openwop/host.js';
import { principalOf } from './auth.js';
import type { BearerVerifier, Principal } from './auth.js';
import { errorHandler, notFoundHandler } from './errors.js';
import { refuseUnencodableInput } from './request-hygiene.js';
import { registerEventRoutes } from './event-routes.js';
import { openApiDocument } from './openapi.js';
import { servedMajors, withServedVersions } from './served-majors.js';
import { registerForceEngineVersion } from './force-engine-version.js';
import { mergeCapabilities } from '../openwop/service-family.js';
import { operatorOpenApi } from './operator-openapi.js';
import { registerAncestryRoute } from './ancestry-route.js';
import { hostsOpenApiPaths, registerHostsRoute } from './hosts-route.js';
import { registerRunRoutes } from './run-routes.js';
import { registerForkRoutes } from './fork-routes.js';
import { registerTestSeamRoutes } from './test-seam-routes.js';
import { CapabilityOverlay } from './capability-overlay.js';
import { registerLlmCacheKeyRoute } from './llm-cache-key-route.js';
import { registerRunListRoute } from './run-list-route.js';
import { promptOpenApiPaths, registerPromptRoutes } from './prompt-routes.js';
import { agentOpenApiPaths, registerAgentRoutes } from './agent-routes.js';
import { agentInventoryOf } from '../openwop/agents/agent-inventory.js';
import { promptLibraryApiOf } from '../openwop/services/prompt-library-family.js';
import { envelopeCatalogOf } from '../openwop/services/ai-envelope-family.js';
import type { ServiceFamily } from '../openwop/service-family.js';
import { registerMcpRoute } from './mcp-route.js';
import type { McpMount } from './mcp-route.js';
import { registerOpenwopV2 } from './v2/register.js';
import type { ServedRoute } from './v2/route-table.js';
import type { EffectLedger } from '../openwop/run-effects.js';
import { enforceRouteRoles, routesOpenApiPaths } from './route-auth.js';

/** Dependencies of {@link buildApp}. */
export interface AppDeps {
  host: OpenwopHost;
  /** Bearer-token check (the policy layer's token store). */
  auth: BearerVerifier;
  clock: Clock;
  logger?: FastifyBaseLogger | boolean;
  sseKeepAliveMs?: number;
  maxPollMs?: number;
  /**
   * Dependencies handed to the operator API and console (`registerOperatorRoutes(app, deps)` in
   * src/server/operator-routes.ts, `registerConsole(app, deps)` in src/console/), registered when
   * those modules exist. Omit to serve the OpenWOP surface alone.
   */
  operator?: Record<string, unknown>;
  /** The host's service families: the prompt library one, when installed, backs `/v1/prompts*` (else 501). */
  families?: readonly ServiceFamily[];
  /**
   * Serve the conformance test seams under `/v1/host/sample/*` (host-sample-test-seams.md). Default false: they
   * are not registered, so they answer 404 like any unknown route, and the OpenAPI document omits them.
   */
  testSeams?: boolean;
  /** Serve OpenWOP major 2 beside major 1 (default true; see `OpenwopV2Deps.openwopV2`). */
  openwopV2?: boolean;
  /** The host ledger, when the MHS runtime is present: backs the v2 effect ledger (`GET /runs/{runId}/effects`). */
  ledger?: EffectLedger;
  /** The MCP gateway's HTTP handler, mounted at `/mcp` (agent tokens only; see src/gateway). */
  mcp?: McpMount;
}

/** What was mounted besides the OpenWOP surface. */
export interface MountReport {
  operatorRoutes: boolean;
  console: boolean;
  skipped: string[];
}

type ModuleFn = (app: FastifyInstance, deps: Record<string, unknown>) => unknown;

// Specifiers in variables: these modules are built by another part of the host and may be absent.
const OPTIONAL = [
  {
    key: 'operatorRoutes',
    spec: './operator-routes.js',
    fn: 'registerOperatorRoutes',
    needs: ['tokens', 'gate', 'permits', 'safety', 'ledger', 'events', 'directory', 'enablement', 'clock'],
  },
  { key: 'console', spec: '../console/index.js', fn: 'registerConsole', needs: [] },
] as const;

async function mountOptional(app: FastifyInstance, deps: Record<string, unknown>): Promise<MountReport> {
  const report: MountReport = { operatorRoutes: false, console: false, skipped: [] };
  for (const m of OPTIONAL) {
    const missing = m.needs.filter((k) => deps[k] === undefined);
    if (missing.length) {
      report.skipped.push(`${m.spec} (missing ${missing.join(', ')})`);
      continue;
    }
    let mod: Record<string, unknown>;
    try {
      mod = (await import(m.spec)) as Record<string, unknown>;
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
        report.skipped.push(`${m.spec} (not present)`);
        continue;
      }
      throw err;
    }
    const fn = mod[m.fn];
    if (typeof fn !== 'function') {
      report.skipped.push(`${m.spec} (no ${m.fn})`);
      continue;
    }
    await (fn as ModuleFn)(app, deps);
    report[m.key] = true;
  }
  return report;
}

/** True when an `If-None-Match` header names `etag` (or `*`); weak validators compare by their opaque part. */
function noneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((t) => {
    const tag = t.trim();
    return tag === '*' || tag.replace(/^W\//, '') === etag;
  });
}

/**
 * `GET /.well-known/openwop` with `Cache-Control` (capabilities.md; openapi `getCapabilities`) and a strong
 * `ETag` of the document (also as `Capabilities-Etag`, capabilities-change-detection.md); `304` on a matching
 * `If-None-Match`.
 */
function serveDiscovery(doc: Record<string, unknown>, req: FastifyRequest, reply: FastifyReply): unknown {
  const body = JSON.stringify(doc);
  const etag = `"${createHash('sha256').update(body).digest('base64url')}"`;
  void reply.header('cache-control', 'public, max-age=300').header('etag', etag).header('capabilities-etag', etag);
  if (noneMatch(req.headers['if-none-match'], etag)) return reply.status(304).send();
  return reply.type('application/json; charset=utf-8').send(body);
}

/**
 * Builds the Fastify app: `GET /.well-known/openwop`, `/v1/openapi.json`, the run, event and
 * workflow routes (bearer auth, client or operator role), the error envelope
 * `{error, message, details?}` for every failure, and, when present, the operator API and console.
 */
export async function buildApp(
  deps: AppDeps,
): Promise<{ app: FastifyInstance; mounted: MountReport; routes: readonly ServedRoute[] }> {
  const app = Fastify({
    logger: deps.logger ?? false,
    bodyLimit: deps.host.limits.maxRequestBodyBytes,
    // Open SSE streams must not hold a shutdown.
    forceCloseConnections: true,
    // Router errors (a malformed URL) in the envelope too (issue 16 item 3).
    frameworkErrors: (err, req, reply) => errorHandler(err, req, reply),
  });
  app.setErrorHandler(errorHandler);
  app.addHook('preValidation', refuseUnencodableInput);
  app.setNotFoundHandler(notFoundHandler);
  app.decorateRequest('principal', undefined);
  // Issue 20: every route below is allowed by its row in the route × role table, or the app does not start.
  const grants = enforceRouteRoles(app, deps.auth);
  // OpenWOP major 2; its version negotiation runs before the auth hook below, and it records every route from here on.
  // The capability toggle's overlay, one per app: the v1 seams and the v2 seams profile read the same entries.
  const seamOverlay = new CapabilityOverlay();
  const routes = registerOpenwopV2(app, { ...deps, seamOverlay });

  app.addHook('onRequest', async (req: FastifyRequest & { principal?: Principal }) => {
    const path = req.url.split('?')[0] ?? '';
    if (!path.startsWith('/v1/') || path === '/v1/openapi.json' || path.startsWith('/v1/operator')) return;
    req.principal = await principalOf(req, deps.auth);
  });

  const served = servedMajors(deps);
  // The test seams make every caller a test caller, so the forced-version header is honoured only with them.
  const engine = Number(deps.host.capabilities().engineVersion);
  const forceRange = deps.testSeams === true ? { min: engine, max: engine } : undefined;
  registerForceEngineVersion(app, forceRange);
  app.get('/.well-known/openwop', (req, reply) => {
    const doc = withServedVersions(deps.host.capabilities(), served);
    return serveDiscovery(
      forceRange ? mergeCapabilities(doc, { testing: { forceEngineVersionRange: forceRange } }) : doc,
      req,
      reply,
    );
  });
  registerRunRoutes(app, deps.host);
  registerForkRoutes(app, deps.host);
  if (deps.testSeams === true)
    registerTestSeamRoutes(app, deps.host, { envelopes: envelopeCatalogOf(deps.families), overlay: seamOverlay });
  if (deps.testSeams === true) registerLlmCacheKeyRoute(app);
  registerRunListRoute(app, deps.host);
  registerAncestryRoute(app, deps.host);
  registerHostsRoute(app, { db: deps.host.store.db, clock: deps.clock, auth: deps.auth });
  registerPromptRoutes(app, promptLibraryApiOf(deps.families));
  registerAgentRoutes(app, agentInventoryOf(deps.families));
  if (deps.mcp) await registerMcpRoute(app, deps.mcp);
  registerEventRoutes(app, {
    host: deps.host,
    clock: deps.clock,
    ...(deps.sseKeepAliveMs !== undefined ? { sseKeepAliveMs: deps.sseKeepAliveMs } : {}),
    ...(deps.maxPollMs !== undefined ? { maxPollMs: deps.maxPollMs } : {}),
  });
  const mounted = deps.operator
    ? await mountOptional(app, deps.operator)
    : { operatorRoutes: false, console: false, skipped: ['operator deps not given'] };
  // One OpenAPI document for everything this app serves, the operator API included when mounted.
  const doc = openApiDocument({
    testSeams: deps.testSeams === true,
    envelopeSeam: envelopeCatalogOf(deps.families) !== undefined,
  }) as { paths: Record<string, unknown> };
  doc.paths = {
    ...doc.paths,
    ...promptOpenApiPaths,
    ...agentOpenApiPaths,
    ...hostsOpenApiPaths,
    ...routesOpenApiPaths,
  };
  if (mounted.operatorRoutes) doc.paths = { ...doc.paths, ...operatorOpenApi.paths };
  app.get('/v1/openapi.json', () => doc);
  // The table as served: every registered route with the roles that may call it (docs/security.md).
  app.get('/v1/operator/routes', () => ({ routes: grants }));
  return { app, mounted, routes };
}
