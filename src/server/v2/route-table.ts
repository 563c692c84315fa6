import type { FastifyInstance, RouteOptions } from 'fastify';

/** One route as the router holds it (`url` in Fastify's form, `/runs/:runId`), with its v2 operation id if any. */
export interface ServedRoute {
  method: string;
  url: string;
  operationId?: string;
}

/**
 * Records every route registered on `app` (and in plugins registered under it) from now on; call it before any
 * route. The v2 OpenAPI document lists the recorded operations, so it describes what is mounted, not a copy of the
 * spec. Returns the live table.
 */
export function recordRoutes(app: FastifyInstance): readonly ServedRoute[] {
  const table: ServedRoute[] = [];
  app.addHook('onRoute', (r: RouteOptions) => {
    // `config.operationId` is one id or, for a route that serves several operations, a list.
    const named = (r.config as { operationId?: unknown } | undefined)?.operationId;
    const ids = (Array.isArray(named) ? named : [named]).filter((x): x is string => typeof x === 'string');
    for (const method of Array.isArray(r.method) ? r.method : [r.method])
      for (const operationId of ids.length ? ids : [undefined])
        table.push({ method, url: r.url, ...(operationId ? { operationId } : {}) });
  });
  return table;
}
