import type { FastifyInstance } from 'fastify';
import { VERSION_OF, manifestOperation } from '../../openwop/v2/index.js';
import type { ServedRoute } from './route-table.js';

const V2_SCHEMAS = 'https://openwop.dev/spec/v2/';

/**
 * The v2 OpenAPI 3.1 document of this host (v2 openapi `getOpenApiSpec`): one path item per published operation
 * (`spec/v2/path-manifest.json`) that a mounted route serves, keyed and named as the manifest keys and names it, on a
 * bare origin. Built from the route table when first asked, so it lists what is mounted.
 */
export function v2OpenApiDocument(routes: readonly ServedRoute[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const op = r.operationId ? manifestOperation(r.operationId) : undefined;
    if (!op) continue;
    (paths[op.path] ??= {})[op.method.toLowerCase()] = {
      operationId: op.operationId,
      ...(op.authenticated ? {} : { security: [] }),
      parameters: [{ $ref: '#/components/parameters/OpenWOPVersion' }],
      responses: {
        default: {
          description: 'the v2 representation or error envelope',
          headers: { 'OpenWOP-Version': { $ref: '#/components/headers/OpenWOPVersion' } },
        },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'mhs-host OpenWOP v2 API', version: VERSION_OF[2] },
    servers: [{ url: '/' }],
    security: [{ ApiKeyAuth: [] }],
    paths,
    components: {
      securitySchemes: { ApiKeyAuth: { type: 'http', scheme: 'bearer' } },
      parameters: {
        OpenWOPVersion: {
          name: 'OpenWOP-Version',
          in: 'header',
          required: false,
          schema: { type: 'string', pattern: '^(0|[1-9][0-9]*)(\\.(0|[1-9][0-9]*))?$' },
        },
      },
      headers: { OpenWOPVersion: { required: true, schema: { type: 'string' } } },
      schemas: { Error: { $ref: `${V2_SCHEMAS}error-envelope.schema.json` } },
    },
  };
}

/** `GET /openapi.json` under major 2 (no authentication, as the manifest row says). */
export function registerV2OpenApiRoute(app: FastifyInstance, routes: readonly ServedRoute[]): void {
  let doc: Record<string, unknown> | undefined;
  app.get('/openapi.json', { config: { operationId: 'getOpenApiSpec' } }, async () => {
    doc ??= v2OpenApiDocument(routes);
    return doc;
  });
}
