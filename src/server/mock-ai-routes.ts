import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ErrorCode, HostError } from '../core/index.js';
import type { OpenwopHost } from '../openwop/host.js';
import { MAX_PROGRAM_ENTRIES } from '../openwop/nodes/structured-output-node.js';
import type { Principal } from './auth.js';

function invalid(message: string, path: string): HostError {
  return new HostError(ErrorCode.VALIDATION_ERROR, message, { errors: [{ path, message }] });
}

/**
 * The mock-AI program seam (host-sample-test-seams.md §5, RFC 0041 §B): `POST /v1/host/sample/test/mock-ai/program`
 * `{nodeId, program: [...]}` replaces the answers the conformance `mock` provider gives `core.ai.structuredOutput`
 * nodes with that id, consumed in order across runs → 200 `{nodeId, entries}`. Authenticated like every route.
 */
export function registerMockAiRoutes(app: FastifyInstance, host: OpenwopHost): void {
  app.post('/v1/host/sample/test/mock-ai/program', async (req: FastifyRequest) => {
    if (!(req as FastifyRequest & { principal?: Principal }).principal)
      throw new HostError(ErrorCode.UNAUTHORIZED, 'a bearer token is required');
    const body = req.body as { nodeId?: unknown; program?: unknown } | null;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('a JSON object body', '');
    if (typeof body.nodeId !== 'string' || !body.nodeId) throw invalid('nodeId is required', '/nodeId');
    if (!Array.isArray(body.program) || body.program.length > MAX_PROGRAM_ENTRIES)
      throw invalid(`program is an array of at most ${MAX_PROGRAM_ENTRIES} entries`, '/program');
    return { nodeId: body.nodeId, entries: host.replay.mockAi.program(body.nodeId, body.program) };
  });
}
