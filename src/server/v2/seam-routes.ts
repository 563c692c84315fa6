import type { FastifyInstance } from 'fastify';
import type { OpenwopHost } from '../../openwop/host.js';
import { parseEra2Seed, seedEra2Run } from '../../openwop/era2-seed.js';
import type { EnvelopeCatalog } from '../../openwop/services/envelope-validation.js';
import { bindRunId } from '../../openwop/v2/index.js';
import { callerOf } from '../auth.js';
import type { CapabilityOverlay } from '../capability-overlay.js';
import { registerLlmCacheKeyRoute } from '../llm-cache-key-route.js';
import { V2_SEAMS } from '../seam-mount.js';
import { registerTestSeamRoutes } from '../test-seam-routes.js';
import { registerV2EffectFireSeams } from './effect-fire-seams.js';
import { registerV2McpInvokeSeam } from './mcp-invoke-seam.js';
import { MCP_INVOKE_NODE } from '../../openwop/nodes/conformance-mcp-invoke-node.js';

/** The seams-profile operation that only major 2 has (api/seams-v2.yaml `seedEra2EventLog`, RFC 0176 §A). */
export const ERA2_SEED_SEAM_PATH = `${V2_SEAMS.prefix}/event-log/seed`;

/** What the v2 seams share with the v1 ones: the capability overlay and the envelope catalog. */
export interface V2SeamDeps {
  overlay: CapabilityOverlay;
  envelopes?: EnvelopeCatalog | undefined;
}

/**
 * The v2 conformance seams profile `openwop-conformance-seams-v2` (conformance.md §The seams profile,
 * api/seams-v2.yaml), registered inside the v2 plugin (bearer auth, the v2 error envelope) and only when the operator
 * enables the test seams: every `/v1/host/sample/…` seam at its `/conformance/seams/sample/…` address, with bound v2
 * run ids and the v2 event projection, plus `POST /conformance/seams/sample/event-log/seed` → `201 {runId}` (a run
 * whose log is the given v1-vocabulary rows, stored verbatim; 400 `validation_error` for a body outside the schema)
 * and the two effect seams (effect-fire-seams.ts), and, where the `mcp` family is installed, the MCP invoke driver
 * (mcp-invoke-seam.ts).
 */
export function registerV2SeamRoutes(app: FastifyInstance, host: OpenwopHost, deps: V2SeamDeps): void {
  registerTestSeamRoutes(app, host, { envelopes: deps.envelopes, overlay: deps.overlay, mount: V2_SEAMS });
  registerLlmCacheKeyRoute(app, V2_SEAMS);
  app.post(ERA2_SEED_SEAM_PATH, async (req, reply) => {
    callerOf(req);
    const runId = await seedEra2Run(host.store, parseEra2Seed(req.body));
    return reply.status(201).send({ runId: bindRunId(runId) });
  });
  registerV2EffectFireSeams(app, host);
  // host-sample-test-seams.md §23 is gated on the MCP client family, whose fixture is installed only with it.
  if (host.registry.has(MCP_INVOKE_NODE)) registerV2McpInvokeSeam(app, host);
}
