import type { FastifyInstance } from 'fastify';
import { llmCacheKey, parseLlmCacheKeyInput } from '../ai/index.js';
import { ErrorCode, HostError } from '../core/index.js';
import { callerOf } from './auth.js';
import { V1_SEAMS } from './seam-mount.js';
import type { SeamMount } from './seam-mount.js';

/** The seam's path (host-sample-test-seams.md §4). */
export const LLM_CACHE_KEY_SEAM_PATH = `${V1_SEAMS.prefix}/test/llm-cache-key`;

/**
 * `POST /v1/host/sample/test/llm-cache-key` (host-sample-test-seams.md §4, RFC 0041 §A, recipe v2 of RFC 0150 §C):
 * an `LLMCacheKeyInput` in, `{cacheKey}` out, computed by the same recipe the providers key their calls with
 * (src/ai/llm-cache-key.ts). Transport-only fields are accepted and ignored. Registered only with the other test
 * seams (`serve --enable-test-seams`); a bearer token is still required. A missing or malformed `provider`, `model`,
 * `messages` or recipe field answers 400 `invalid_argument` (the code the seam names; `details.path`); under the v2
 * seams profile (`mount`) the refusal is the v2 envelope of that code.
 */
export function registerLlmCacheKeyRoute(app: FastifyInstance, mount: SeamMount = V1_SEAMS): void {
  app.post(`${mount.prefix}/test/llm-cache-key`, async (req, reply) => {
    callerOf(req);
    try {
      return { cacheKey: llmCacheKey(parseLlmCacheKeyInput(req.body)) };
    } catch (err) {
      // A lone surrogate is not I-JSON (RFC 0212): the caller's fault too.
      if (
        err instanceof HostError &&
        (err.code === ErrorCode.INVALID_ARGUMENT || err.code === ErrorCode.HOST_JSON_UNENCODABLE)
      ) {
        const refusal = new HostError(ErrorCode.INVALID_ARGUMENT, err.message, err.details);
        if (mount.major === 2) throw refusal;
        return reply.status(400).send(refusal.toEnvelope());
      }
      throw err;
    }
  });
}
