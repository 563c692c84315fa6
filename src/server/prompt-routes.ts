import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode, HostError, jcs, sha256Hex } from '../core/index.js';
import { MAX_RENDER_REQUEST_BYTES } from '../openwop/services/prompt-library-api.js';
import type { PromptLibraryApi, PromptSource, RenderRequest } from '../openwop/services/prompt-library-api.js';
import { schemaId } from '../openwop/schemas.js';
import type { Principal } from './auth.js';
import { PROMPT_REQUEST_SCHEMAS, checkPromptInput } from './prompt-schemas.js';

interface ListQuery {
  kind?: string;
  tag?: string | string[];
  modelClass?: string;
  source?: PromptSource;
  cursor?: string;
  limit?: string;
}

export type IdRoute = { Params: { templateId: string }; Querystring: Record<string, string> };
export type IdRequest = FastifyRequest<IdRoute>;

/** The checked `{templateId}` path parameter. */
export function templateIdOf(req: IdRequest): string {
  return checkPromptInput<{ templateId: string }>('TemplateIdParam', req.params, 'path').templateId;
}

/** `listPromptTemplates` (both majors): filters checked against the request schema, then the library's page. */
export async function listPrompts(api: PromptLibraryApi, req: FastifyRequest): Promise<unknown> {
  const q = checkPromptInput<ListQuery>('ListPromptTemplatesQuery', req.query, 'query');
  return api.list({
    ...(q.kind ? { kind: q.kind } : {}),
    ...(q.tag !== undefined ? { tags: Array.isArray(q.tag) ? q.tag : [q.tag] } : {}),
    ...(q.modelClass ? { modelClass: q.modelClass } : {}),
    ...(q.source ? { source: q.source } : {}),
    ...(q.cursor ? { cursor: q.cursor } : {}),
    ...(q.limit ? { limit: Number(q.limit) } : {}),
  });
}

/** `getPromptTemplate` (both majors): the template with its `ETag` and `Cache-Control`, or `304`. */
export async function getPrompt(api: PromptLibraryApi, req: IdRequest, reply: FastifyReply): Promise<unknown> {
  const templateId = templateIdOf(req);
  const q = checkPromptInput<{ version?: string }>('GetPromptTemplateQuery', req.query, 'query');
  // Single-library host: `libraryId` has nothing to disambiguate and is accepted as is.
  const t = await api.get(templateId, q.version);
  const etag = `"sha256:${sha256Hex(jcs(t))}"`;
  void reply.header('etag', etag);
  void reply.header('cache-control', q.version ? 'public, max-age=31536000, immutable' : 'max-age=60');
  const inm = req.headers['if-none-match'];
  if (typeof inm === 'string' && inm.split(',').some((x) => x.trim() === etag || x.trim() === '*')) {
    return reply.status(304).send();
  }
  return t;
}

/** `renderPromptTemplate` (both majors). */
export async function renderPrompt(api: PromptLibraryApi, req: FastifyRequest): Promise<unknown> {
  return api.render(checkPromptInput<RenderRequest>('RenderPromptRequest', req.body, 'body'));
}

/**
 * `/v1/prompts*` (RFC 0028 §A; prompts.md §"Discovery & distribution"), mounted when `--prompts` installed the
 * prompt library: `GET /v1/prompts` (filters `kind`, `tag` (repeatable, all must match), `modelClass`, `source`;
 * `limit` 1-200, default 50; opaque `cursor` → `nextCursor`), `GET /v1/prompts/{templateId}` (`?version` pins;
 * `ETag` + `If-None-Match` → 304), `POST /v1/prompts:render`, and the mutable library (`POST`, `PUT`, `DELETE`;
 * user templates only, host templates answer 403). Without a library every `/v1/prompts*` request answers 501
 * `capability_not_provided`. Authentication is the `/v1` bearer check the app applies before any route.
 */
export function registerPromptRoutes(app: FastifyInstance, api: PromptLibraryApi | undefined): void {
  if (!api) {
    const refuse = (): never => {
      throw new HostError(
        ErrorCode.CAPABILITY_NOT_PROVIDED,
        'this host does not serve the prompt library REST surface',
        {
          capability: 'prompts.endpointsSupported',
        },
      );
    };
    for (const path of ['/v1/prompts', '/v1/prompts/*', '/v1/prompts::render']) app.all(path, refuse);
    return;
  }

  app.get('/v1/prompts', async (req) => listPrompts(api, req));
  app.get('/v1/prompts/:templateId', async (req: IdRequest, reply: FastifyReply) => getPrompt(api, req, reply));
  app.post('/v1/prompts::render', { bodyLimit: MAX_RENDER_REQUEST_BYTES }, async (req) => renderPrompt(api, req));

  // The library steers every agent that resolves a PromptRef: changing it is an operator action.
  const operatorOnly = { preHandler: requireOperator };
  app.post('/v1/prompts', operatorOnly, async (req, reply) => {
    const t = await api.create(req.body);
    const location = `/v1/prompts/${t.templateId}?version=${encodeURIComponent(t.version)}`;
    return reply.status(201).header('location', location).send(t);
  });

  app.put<IdRoute>('/v1/prompts/:templateId', operatorOnly, async (req: IdRequest) =>
    api.update(templateIdOf(req), req.body),
  );

  app.delete<IdRoute>('/v1/prompts/:templateId', operatorOnly, async (req: IdRequest, reply: FastifyReply) => {
    await api.remove(templateIdOf(req));
    return reply.status(204).send();
  });
}

/** The library steers every agent that resolves a PromptRef: changing it needs an operator token. */
export async function requireOperator(req: FastifyRequest): Promise<void> {
  const role = (req as FastifyRequest & { principal?: Principal }).principal?.role;
  if (role !== 'operator')
    throw new HostError(ErrorCode.FORBIDDEN, 'changing the prompt library needs an operator token', { role });
}

const json = (schema: Record<string, unknown>): Record<string, unknown> => ({ 'application/json': { schema } });
const err = (description: string): Record<string, unknown> => ({
  description,
  content: json({ $ref: '#/components/schemas/Error' }),
});
const template = { $ref: schemaId('prompt-template') };
const unsupported = { '501': err('capability_not_provided: the host was started without --prompts') };
const templateIdParam = {
  name: 'templateId',
  in: 'path',
  required: true,
  schema: PROMPT_REQUEST_SCHEMAS.TemplateIdParam.properties.templateId,
};
const query = (name: 'ListPromptTemplatesQuery' | 'GetPromptTemplateQuery'): Array<Record<string, unknown>> =>
  Object.entries(PROMPT_REQUEST_SCHEMAS[name].properties).map(([n, schema]) => ({ name: n, in: 'query', schema }));

/** OpenAPI 3.1 paths of the `/v1/prompts*` operations (RFC 0028 §A operationIds), merged into `/v1/openapi.json`. */
export const promptOpenApiPaths: Record<string, unknown> = {
  '/v1/prompts': {
    get: {
      operationId: 'listPromptTemplates',
      summary: 'Prompt templates (latest version of each), filtered and paged',
      parameters: query('ListPromptTemplatesQuery'),
      responses: {
        '200': {
          description: 'one page',
          content: json({
            type: 'object',
            required: ['items'],
            properties: { items: { type: 'array', items: template }, nextCursor: { type: 'string' } },
          }),
        },
        '400': err('validation_error'),
        '401': err('unauthorized'),
        ...unsupported,
      },
    },
    post: {
      operationId: 'createPromptTemplate',
      summary: 'Create a user template (meta.source user); Location names the pinned version',
      requestBody: { required: true, content: json(template) },
      responses: {
        '201': { description: 'created', content: json(template) },
        '400': err('validation_error'),
        '401': err('unauthorized'),
        '403': err('forbidden: the templateId is a read-only host template'),
        '409': err('conflict: the templateId exists (PUT a new version) or the version was used before'),
        ...unsupported,
      },
    },
  },
  '/v1/prompts/{templateId}': {
    get: {
      operationId: 'getPromptTemplate',
      summary: 'One template, the latest version or the one `version` pins (ETag, If-None-Match)',
      parameters: [templateIdParam, ...query('GetPromptTemplateQuery')],
      responses: {
        '200': { description: 'the template', content: json(template) },
        '304': { description: 'not modified' },
        '400': err('validation_error'),
        '401': err('unauthorized'),
        '404': err('not_found'),
        ...unsupported,
      },
    },
    put: {
      operationId: 'updatePromptTemplate',
      summary: 'Append a new version of a user template; its version must be above the latest',
      parameters: [templateIdParam],
      requestBody: { required: true, content: json(template) },
      responses: {
        '200': { description: 'the new version', content: json(template) },
        '400': err('validation_error'),
        '401': err('unauthorized'),
        '403': err('forbidden: host template'),
        '404': err('not_found'),
        '409': err('conflict: version not above the stored one'),
        ...unsupported,
      },
    },
    delete: {
      operationId: 'deletePromptTemplate',
      summary: 'Delete a user template (every version leaves the library; pinned runs still replay it)',
      parameters: [templateIdParam],
      responses: {
        '204': { description: 'deleted' },
        '401': err('unauthorized'),
        '403': err('forbidden: host template'),
        '404': err('not_found'),
        ...unsupported,
      },
    },
  },
  '/v1/prompts:render': {
    post: {
      operationId: 'renderPromptTemplate',
      summary: 'Compose a template with bindings, as node execution does (no LLM call)',
      requestBody: {
        required: true,
        content: json({
          ...PROMPT_REQUEST_SCHEMAS.RenderPromptRequest,
          properties: {
            ...PROMPT_REQUEST_SCHEMAS.RenderPromptRequest.properties,
            ref: { $ref: schemaId('prompt-ref') },
          },
        }),
      },
      responses: {
        '200': { description: 'composed', content: json(PROMPT_REQUEST_SCHEMAS.RenderPromptResponse) },
        '400': err('validation_error, prompt_ref_invalid or prompt_variable_unresolved'),
        '401': err('unauthorized'),
        '404': err('not_found'),
        '413': err('validation_error: body above prompts.library.maxRenderRequestBytes'),
        ...unsupported,
      },
    },
  },
};
