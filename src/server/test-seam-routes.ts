import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ErrorCode, HostError, isJsonObject } from '../core/index.js';
import type { OpenwopHost } from '../openwop/host.js';
import { MAX_PROGRAM_ENTRIES } from '../openwop/nodes/structured-output-node.js';
import { callerOf } from './auth.js';
import { LLM_CACHE_KEY_SEAM_PATH } from './llm-cache-key-route.js';
import { CapabilityOverlay } from './capability-overlay.js';
import { CAPABILITY_TOGGLE_SEAM_PATH, registerCapabilityToggleSeam } from './capability-toggle-seam.js';
import { ENVELOPE_ACCEPT_SEAM_PATH, registerEnvelopeAcceptSeam } from './envelope-accept-seam.js';
import { WORKFLOW_REGISTER_SEAM_PATH, registerWorkflowRegisterSeam } from './workflow-register-seam.js';
import type { EnvelopeCatalog } from '../openwop/services/envelope-validation.js';
import { projectEvent } from '../openwop/v2/index.js';
import type { RunEvent } from '../openwop/types.js';
import { runOwner } from './v2/run-owner.js';
import { V1_SEAMS, v2SeamPath } from './seam-mount.js';
import type { SeamMount } from './seam-mount.js';

/** The conformance-only seam paths this host serves when the operator turns them on. */
export const TEST_SEAM_PATHS = [
  '/v1/host/sample/replay/effect-count',
  '/v1/host/sample/test/mock-ai/program',
  '/v1/host/sample/test/runs/{runId}/variables',
  '/v1/host/sample/test/runs/{runId}/events',
  LLM_CACHE_KEY_SEAM_PATH,
  CAPABILITY_TOGGLE_SEAM_PATH,
  WORKFLOW_REGISTER_SEAM_PATH,
  // Only where the host claims the aiEnvelope family.
  ENVELOPE_ACCEPT_SEAM_PATH,
] as const;

/** The same seams under the v2 seams profile (api/seams-v2.yaml; `/v1/host/sample/` → `/conformance/seams/sample/`). */
export const V2_TEST_SEAM_PATHS = TEST_SEAM_PATHS.map(v2SeamPath);

/** The filters of the event-log seam; each given one must match (`correlationId` is read from the payload). */
const EVENT_FILTERS = ['type', 'nodeId', 'causationId', 'correlationId'] as const;

/**
 * The env gate host-sample-test-seams.md names for the reference implementation; `serve` accepts it beside
 * `--enable-test-seams`. Only the exact value `true` turns the seams on.
 */
export const TEST_SEAM_ENV_VAR = 'OPENWOP_TEST_SEAM_ENABLED';

function invalid(message: string, path: string): HostError {
  return new HostError(ErrorCode.VALIDATION_ERROR, message, { errors: [{ path, message }] });
}

/**
 * The conformance test seams under `/v1/host/sample/*` (host-sample-test-seams.md), or under `o.mount` (the v2
 * seams profile, `/conformance/seams/sample/*`: bound v2 run ids, the v2 event projection; src/server/v2/seam-routes.ts):
 * registered only when the operator enables them (`AppDeps.testSeams`, `serve --enable-test-seams`); otherwise they
 * are unknown routes (404). The paths below are the v1 ones.
 * An enabled seam still needs a bearer token.
 * - `GET /v1/host/sample/replay/effect-count?runId=` → `{runId, effectCount}`: effects the conformance effect seam
 *   counted for a run (§20, RFC 0140).
 * - `POST /v1/host/sample/test/mock-ai/program` `{nodeId, program: [...]}` → `{nodeId, entries}`: replaces the answers
 *   the conformance `mock` provider gives `core.ai.structuredOutput` nodes with that id, consumed in order across
 *   runs (§5, RFC 0041 §B).
 * - `POST /v1/host/sample/test/runs/{runId}/variables` `{variables: {name: value}}` → `{runId, variables}`: sets
 *   declared variables of a live run through its actor (`variable.changed` events, durable), so a test can mutate a
 *   parent while its child is suspended (RFC 0022 §B HVMAP-2, `conformance-subworkflow-mid-run-mutation`). 404
 *   unknown run, 409 terminal or ending run, 400 `validation_error` for a refused body (nothing written).
 * - `GET /v1/host/sample/test/runs/{runId}/events?type=&nodeId=&causationId=&correlationId=` → `{events}`: the run's
 *   stored log, filtered (the conformance `queryTestEvents` helper; durability-poison-exhaustion). 404 unknown run.
 * - `POST /v1/host/sample/test/capability-toggle` (capability-toggle-seam.ts), `POST /v1/host/sample/workflows`
 *   (workflow-register-seam.ts) and, when `envelopes` is given (the aiEnvelope family is installed),
 *   `POST /v1/host/sample/envelope/accept` (envelope-accept-seam.ts); the toggle's overlay is what the other two read.
 */
export function registerTestSeamRoutes(
  app: FastifyInstance,
  host: OpenwopHost,
  o: { envelopes?: EnvelopeCatalog | undefined; overlay?: CapabilityOverlay; mount?: SeamMount } = {},
): void {
  // One overlay per app: a toggle through either major's seam is what both majors' seams read.
  const overlay = o.overlay ?? new CapabilityOverlay();
  const mount = o.mount ?? V1_SEAMS;
  const at = (path: string): string => `${mount.prefix}${path}`;
  registerCapabilityToggleSeam(app, overlay, mount);
  registerWorkflowRegisterSeam(app, host, overlay, mount);
  if (o.envelopes) registerEnvelopeAcceptSeam(app, host, o.envelopes, overlay, mount);

  app.get<{ Querystring: { runId?: string } }>(at('/replay/effect-count'), async (req) => {
    callerOf(req);
    const param = req.query.runId;
    if (typeof param !== 'string' || !param) {
      throw new HostError(ErrorCode.VALIDATION_ERROR, 'runId is required', { path: 'query:runId' });
    }
    const runId = mount.runId(param);
    if (!(await host.store.getRun(runId)))
      throw new HostError(ErrorCode.NOT_FOUND, `run ${param} not found`, { runId: param });
    return { runId: mount.wireRunId(runId), effectCount: host.replay.effectCount(runId) };
  });

  app.post(at('/test/mock-ai/program'), async (req: FastifyRequest) => {
    callerOf(req);
    const body = req.body as { nodeId?: unknown; program?: unknown } | null;
    if (!isJsonObject(body)) throw invalid('a JSON object body', '');
    if (typeof body.nodeId !== 'string' || !body.nodeId) throw invalid('nodeId is required', '/nodeId');
    if (!Array.isArray(body.program) || body.program.length > MAX_PROGRAM_ENTRIES)
      throw invalid(`program is an array of at most ${MAX_PROGRAM_ENTRIES} entries`, '/program');
    return { nodeId: body.nodeId, entries: host.replay.mockAi.program(body.nodeId, body.program) };
  });

  app.get<{ Params: { runId: string }; Querystring: Record<string, string | undefined> }>(
    at('/test/runs/:runId/events'),
    async (req) => {
      callerOf(req);
      const runId = mount.runId(req.params.runId);
      const run = await host.store.getRun(runId);
      if (!run)
        throw new HostError(ErrorCode.NOT_FOUND, `run ${req.params.runId} not found`, { runId: req.params.runId });
      const stored = await host.store.events(runId);
      // Under major 2 the log is read as the v2 projection, so the filters name v2 types and ids.
      const owner = mount.major === 2 ? await runOwner(host, run) : undefined;
      const read: ReadonlyArray<RunEvent | ReturnType<typeof projectEvent>> = owner
        ? stored.map((e) => projectEvent(e, owner))
        : stored;
      const field = (e: Record<string, unknown>, f: (typeof EVENT_FILTERS)[number]): unknown =>
        f === 'correlationId' ? (e.payload as Record<string, unknown>).correlationId : e[f];
      const events = read.filter((e) =>
        EVENT_FILTERS.every((f) => req.query[f] === undefined || field(e as never, f) === req.query[f]),
      );
      return { events };
    },
  );

  app.post<{ Params: { runId: string } }>(at('/test/runs/:runId/variables'), async (req) => {
    const who = callerOf(req);
    const body = req.body as { variables?: unknown } | null;
    if (!isJsonObject(body)) throw invalid('a JSON object body', '');
    const extra = Object.keys(body).find((k) => k !== 'variables');
    if (extra) throw invalid('only variables is accepted', `/${extra}`);
    if (!isJsonObject(body.variables)) throw invalid('variables is an object of name → value', '/variables');
    const runId = mount.runId(req.params.runId);
    const variables = await host.runs.setVariables(runId, body.variables, who);
    return { runId: mount.wireRunId(runId), variables };
  });
}
