import type { FastifyInstance, FastifyReply } from 'fastify';
import { ErrorCode, HostError } from '../../core/index.js';
import { MAX_RENDER_REQUEST_BYTES } from '../../openwop/services/prompt-library-api.js';
import type { PromptLibraryApi } from '../../openwop/services/prompt-library-api.js';
import { getPrompt, listPrompts, renderPrompt, requireOperator, templateIdOf } from '../prompt-routes.js';
import type { IdRequest, IdRoute } from '../prompt-routes.js';

/**
 * The prompt-template library under major 2 (v2 openapi `listPromptTemplates`, `createPromptTemplate`,
 * `getPromptTemplate`, `updatePromptTemplate`, `deletePromptTemplate`, `renderPromptTemplate`; RFC 0028 §A): the
 * same library and handlers `/v1/prompts*` use, answered in the v2 envelope (prompt codes with no v2 row fold into
 * their registered class, `details.hostCode` naming them). Mutations need an operator token (`403 forbidden`).
 * Without a library every operation is `422 capability_not_provided` (the registered status of that code).
 */
export function registerV2PromptRoutes(app: FastifyInstance, api: PromptLibraryApi | undefined): void {
  const lib = (): PromptLibraryApi => {
    if (!api)
      throw new HostError(ErrorCode.CAPABILITY_NOT_PROVIDED, 'this host does not serve the prompt library', {
        capability: 'prompts.endpointsSupported',
      });
    return api;
  };
  const op = (operationId: string) => ({ config: { operationId } });
  const mutation = (operationId: string) => ({ ...op(operationId), preHandler: requireOperator });

  app.get('/prompts', op('listPromptTemplates'), async (req) => listPrompts(lib(), req));
  app.get<IdRoute>('/prompts/:templateId', op('getPromptTemplate'), async (req: IdRequest, reply: FastifyReply) =>
    getPrompt(lib(), req, reply),
  );
  app.post('/prompts::render', { ...op('renderPromptTemplate'), bodyLimit: MAX_RENDER_REQUEST_BYTES }, async (req) =>
    renderPrompt(lib(), req),
  );
  app.post('/prompts', mutation('createPromptTemplate'), async (req, reply) => {
    const t = await lib().create(req.body);
    const location = `/prompts/${t.templateId}?version=${encodeURIComponent(t.version)}`;
    return reply.status(201).header('location', location).send(t);
  });
  app.put<IdRoute>('/prompts/:templateId', mutation('updatePromptTemplate'), async (req: IdRequest) =>
    lib().update(templateIdOf(req), req.body),
  );
  app.delete<IdRoute>(
    '/prompts/:templateId',
    mutation('deletePromptTemplate'),
    async (req: IdRequest, reply: FastifyReply) => {
      await lib().remove(templateIdOf(req));
      return reply.status(204).send();
    },
  );
}
