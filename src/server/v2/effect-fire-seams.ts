import type { FastifyInstance } from 'fastify';
import { ErrorCode, HostError } from '../../core/index.js';
import type { Caller } from '../../openwop/node-registry.js';
import type { OpenwopHost } from '../../openwop/host.js';
import type { EffectAttempt } from '../../openwop/effects/effect-records.js';
import { EFFECT_POST_WORKFLOW } from '../../openwop/nodes/conformance-effect-node.js';
import {
  EFFECT_SEAMS,
  bindEffectId,
  bindRunId,
  parseEffectRetry,
  parseFireEffectSeam,
} from '../../openwop/v2/index.js';
import { callerOf } from '../auth.js';
import { V2_SEAMS } from '../seam-mount.js';

/** `fireEffectSeam` (api/seams-v2.yaml). */
export const FIRE_EFFECT_SEAM_PATH = `${V2_SEAMS.prefix}/effect-seams/fire`;
/** `forceEffectTransportRetry` (api/seams-v2.yaml). */
export const EFFECT_RETRY_SEAM_PATH = `${V2_SEAMS.prefix}/test/idempotency/effect-retry`;

/** The manifest rows a seam can fire here: the others need an operator-configured MHS endpoint, MCP server or model. */
export const FIREABLE_SEAMS: readonly string[] = ['http.remote-run'];

// "Omitted, the host uses its own unreachable fixture destination" (fireEffectSeam): nothing listens on port 1 of the
// loopback interface, so the effect is claimed and its attempts fail at the transport (the ledger is the witness).
const UNREACHABLE = 'http://127.0.0.1:1/';

/** Runs the effect fixture against `url` to its end; its `http.remote-run` attempts, in claim order. */
async function runEffect(host: OpenwopHost, url: string, caller: Caller): Promise<{ runId: string; effectId: string }> {
  const { run } = await host.runs.createRun({ workflowId: EFFECT_POST_WORKFLOW, inputs: { url } }, caller);
  await host.runs.waitTerminal(run.runId);
  const attempts: EffectAttempt[] = (await host.effects.forRun(run.runId)).filter((e) => e.seam === 'http.remote-run');
  const first = attempts[0];
  if (!first)
    throw new HostError(ErrorCode.INTERNAL, 'the effect fixture run recorded no effect', { runId: run.runId });
  return { runId: run.runId, effectId: first.effectId };
}

/**
 * The effect seams of the v2 seams profile, mounted with it (test seams on). Both run the effect fixture
 * ({@link EFFECT_POST_WORKFLOW}: one `http.remote-run` effect through the node's Layer-2 guard, retried once at the
 * transport layer under its key) to its end before answering, so its ledger rows are there to read:
 * - `POST /conformance/seams/sample/effect-seams/fire` `{seam, receiverUrl?}` → `201 {runId}`: fires the named
 *   `GET /host/effect-seams` row once inside a run, at `receiverUrl` or an unreachable destination. A name that is no
 *   manifest row is `400 validation_error`; a row this host cannot fire from a seam ({@link FIREABLE_SEAMS}) `404`.
 * - `POST /conformance/seams/sample/test/idempotency/effect-retry` `{providerUrl}` → `201 {runId, effectId}`: the
 *   effect sent to the suite's fixture provider, every attempt carrying the same `Idempotency-Key` (its ledger
 *   `providerKey`); `effectId` is the id `GET /runs/{runId}/effects` names it by.
 */
export function registerV2EffectFireSeams(app: FastifyInstance, host: OpenwopHost): void {
  app.post(FIRE_EFFECT_SEAM_PATH, async (req, reply) => {
    const caller = callerOf(req);
    const body = parseFireEffectSeam(req.body);
    const seams = EFFECT_SEAMS.map((s) => s.seam);
    if (!seams.includes(body.seam))
      throw new HostError(ErrorCode.VALIDATION_ERROR, `${body.seam} is not a row of GET /host/effect-seams`, {
        seam: body.seam,
        seams,
      });
    if (!FIREABLE_SEAMS.includes(body.seam))
      throw new HostError(
        ErrorCode.NOT_FOUND,
        `this host cannot fire ${body.seam} from a seam: it reaches only operator-configured destinations`,
        { seam: body.seam, fireable: [...FIREABLE_SEAMS] },
      );
    const { runId } = await runEffect(host, body.receiverUrl ?? UNREACHABLE, caller);
    return reply.status(201).send({ runId: bindRunId(runId) });
  });
  app.post(EFFECT_RETRY_SEAM_PATH, async (req, reply) => {
    const caller = callerOf(req);
    const body = parseEffectRetry(req.body);
    const { runId, effectId } = await runEffect(host, body.providerUrl, caller);
    return reply.status(201).send({ runId: bindRunId(runId), effectId: bindEffectId(effectId) });
  });
}
