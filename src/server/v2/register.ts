import { servedMajors } from '../served-majors.js';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode, HostError, toHostError } from '../../core/index.js';
import type { Clock } from '../../core/index.js';
import type { OpenwopHost } from '../../openwop/host.js';
import { toV2Error } from '../../openwop/v2/index.js';
import { principalOf } from '../auth.js';
import type { BearerVerifier, Principal } from '../auth.js';
import { frameworkError } from '../request-hygiene.js';
import { agentInventoryOf } from '../../openwop/agents/agent-inventory.js';
import { promptLibraryApiOf } from '../../openwop/services/prompt-library-family.js';
import { v2RecordsOf } from '../../openwop/service-family.js';
import type { ServiceFamily } from '../../openwop/service-family.js';
import { registerV2AgentRoutes } from './agent-routes.js';
import { registerV2CancelRoute } from './cancel-route.js';
import { registerV2EffectSeamsRoute } from './effect-seams-route.js';
import { registerV2EffectsRoute } from './effects-route.js';
import type { EffectLedger } from '../../openwop/run-effects.js';
import { registerV2EventRoutes } from './event-routes.js';
import { registerV2ForkRoute } from './fork-route.js';
import { registerV2InterruptRoute } from './interrupt-route.js';
import { registerNegotiation } from './negotiation-hook.js';
import { registerV2OpenApiRoute } from './openapi-route.js';
import { registerV2PromptRoutes } from './prompt-routes.js';
import { RequestIdempotency } from './request-idempotency.js';
import { recordRoutes } from './route-table.js';
import type { ServedRoute } from './route-table.js';
import { registerV2RunRoutes } from './run-routes.js';
import { registerV2WorkflowRoutes } from './workflow-routes.js';
import { registerV2SeamRoutes } from './seam-routes.js';
import { CapabilityOverlay } from '../capability-overlay.js';
import { envelopeCatalogOf } from '../../openwop/services/ai-envelope-family.js';

/** Dependencies of {@link registerOpenwopV2}. */
export interface OpenwopV2Deps {
  host: OpenwopHost;
  auth: BearerVerifier;
  clock: Clock;
  sseKeepAliveMs?: number;
  maxPollMs?: number;
  /** The host's service families: the prompt library and the manifest-agent inventory back their v2 twins. */
  families?: readonly ServiceFamily[];
  /**
   * Serve major 2 beside major 1 (default true; `false` serves major 1 alone). v2 versioning.md §1.2: a host
   * advertises a major only while every path-manifest operation it serves under the other is reachable under it
   * (test/openwop/v2/pairing.test.ts checks that against the route table).
   */
  openwopV2?: boolean;
  /** The host ledger (`serve` with the MHS runtime): `GET /runs/{runId}/effects` projects its governed commands. */
  ledger?: EffectLedger;
  /**
   * Mount the v2 conformance seams profile under `/conformance/seams/` and advertise it (`conformance.seamsProfile`;
   * `serve --enable-test-seams`). Default false: those paths are unknown routes (404).
   */
  testSeams?: boolean;
  /** The capability overlay the v1 seams toggle, shared with the v2 ones (one per app). */
  seamOverlay?: CapabilityOverlay;
}

// Framework refusals whose v2 code has no host twin (v2 errors.json rows).
const FRAMEWORK_CODES: Partial<Record<number, string>> = { 413: 'payload_too_large', 415: 'unsupported_media_type' };

/** The implementation name the discovery document gives (the effect-seam manifest's `host.name`). */
function hostName(host: OpenwopHost): string {
  const impl = host.capabilities().implementation as { name?: unknown } | undefined;
  return typeof impl?.name === 'string' ? impl.name : 'mhs-host';
}

/** Any failure on a major-2 route as the v2 envelope with the v2 registry's status (v2 errors.md). */
function v2ErrorHandler(err: FastifyError | Error, _req: FastifyRequest, reply: FastifyReply): void {
  const fw = frameworkError(err);
  const named = fw ? FRAMEWORK_CODES[fw.status] : undefined;
  const { status, body } = named
    ? { status: fw!.status, body: { error: named, message: fw!.error.message } }
    : toV2Error(err instanceof HostError ? err : fw ? fw.error : toHostError(err, ErrorCode.INTERNAL));
  if (status === 401) void reply.header('www-authenticate', 'Bearer');
  void reply.status(status).type('application/json').send(body);
}

/**
 * OpenWOP major 2 beside major 1, over the same engine: negotiation by `OpenWOP-Version` on every request (before
 * authentication), the v2 discovery root, and the unversioned run and event routes with bearer auth and the v2
 * error envelope. Call it before any other `onRequest` hook so a version refusal precedes an auth refusal, and before
 * any route: the returned table records every route registered on `app` from then on, both majors' (the v2 OpenAPI
 * document is built from it; versioning.md §1.2 pairing is checked against it).
 */
export function registerOpenwopV2(app: FastifyInstance, deps: OpenwopV2Deps): readonly ServedRoute[] {
  const routes = recordRoutes(app);
  // Without major 2, `OpenWOP-Version: 2` is answered 406 with protocolVersions ["1.0"] (versioning.md §1.3).
  const served = servedMajors(deps);
  const v2On = served.includes(2);
  const seams = v2On && deps.testSeams === true;
  registerNegotiation(app, deps.host, served, routes, { seams, records: () => v2RecordsOf(deps.families ?? []) });
  if (!v2On) return routes;
  void app.register(async (v2) => {
    v2.setErrorHandler(v2ErrorHandler);
    v2.addHook('onRequest', async (req: FastifyRequest & { principal?: Principal }) => {
      req.principal = await principalOf(req, deps.auth);
    });
    registerV2RunRoutes(v2, deps.host);
    const idem = new RequestIdempotency(deps.host.store.db, deps.clock);
    registerV2ForkRoute(v2, deps.host, deps.clock, idem);
    registerV2CancelRoute(v2, deps.host, idem);
    registerV2InterruptRoute(v2, deps.host, idem);
    registerV2WorkflowRoutes(v2, deps.host);
    registerV2EffectSeamsRoute(v2, hostName(deps.host));
    if (deps.ledger) registerV2EffectsRoute(v2, deps.host, deps.ledger);
    registerV2AgentRoutes(v2, agentInventoryOf(deps.families));
    registerV2PromptRoutes(v2, promptLibraryApiOf(deps.families));
    if (seams)
      registerV2SeamRoutes(v2, deps.host, {
        overlay: deps.seamOverlay ?? new CapabilityOverlay(),
        envelopes: envelopeCatalogOf(deps.families),
      });
    registerV2EventRoutes(v2, {
      host: deps.host,
      clock: deps.clock,
      ...(deps.sseKeepAliveMs !== undefined ? { sseKeepAliveMs: deps.sseKeepAliveMs } : {}),
      ...(deps.maxPollMs !== undefined ? { maxPollMs: deps.maxPollMs } : {}),
    });
  });
  // Unauthenticated, as its manifest row says.
  void app.register(async (v2) => {
    v2.setErrorHandler(v2ErrorHandler);
    registerV2OpenApiRoute(v2, routes);
  });
  return routes;
}
