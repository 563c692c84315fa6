/**
 * Authorization as data (issue 20 item 1): every route the host serves, by method and router URL (Fastify's form,
 * `/v1/runs/:runId`), with the token roles that may call it. `enforceRouteRoles` (route-auth.ts) checks each request
 * against this table and nothing else decides a role; a route registered without a row here stops `serve` from
 * starting (`MHS.HOST.ROUTE_UNMAPPED`) and answers 403 if it is reached anyway. docs/security.md prints the table.
 */
import type { TokenRole } from '../policy/tokens.js';

/** `public`: no token needed (discovery, the OpenAPI documents, the console's static files). */
export type RouteAccess = 'public' | readonly TokenRole[];

/** One row: a method (`*`: every method the router registered for the URL) and a router URL. */
export interface RouteRoleRow {
  method: string;
  url: string;
  roles: RouteAccess;
}

/** Reads of the run and operator APIs: everyone but the gateway's agent. */
const READ = ['client', 'operator', 'viewer'] as const;
/** Run API writes (start, cancel, resume, fork) and reads that are POSTs: client and operator, never a viewer. */
const RUN = ['client', 'operator'] as const;
/** Changes to what runs or to devices: operator only. */
const OPERATOR = ['operator'] as const;
/** The MCP gateway: agent tokens only (docs/mcp-gateway.md). */
const AGENT = ['agent'] as const;

const rows = (roles: RouteAccess, entries: ReadonlyArray<readonly [string, string]>): RouteRoleRow[] =>
  entries.map(([method, url]) => ({ method, url, roles }));

export const ROUTE_ROLES: readonly RouteRoleRow[] = [
  ...rows('public', [
    ['GET', '/.well-known/openwop'],
    ['GET', '/v1/openapi.json'],
    ['GET', '/openapi.json'],
    ['GET', '/console'],
    ['GET', '/console/'],
    ['GET', '/console/index.html'],
    ['GET', '/console/console.js'],
    ['GET', '/console/console.css'],
    ['GET', '/console/uplot.css'],
  ]),
  // OpenWOP major 1.
  ...rows(READ, [
    ['GET', '/v1/runs'],
    ['GET', '/v1/runs/:runId'],
    ['GET', '/v1/runs/:runId/events'],
    ['GET', '/v1/runs/:runId/events/poll'],
    ['GET', '/v1/runs/:runId/ancestry'],
    ['GET', '/v1/workflows'],
    ['GET', '/v1/workflows/:workflowId'],
    ['GET', '/v1/agents'],
    ['GET', '/v1/agents/:agentId'],
    ['GET', '/v1/prompts'],
    ['GET', '/v1/prompts/:templateId'],
  ]),
  ...rows(RUN, [
    ['POST', '/v1/runs'],
    ['POST', '/v1/runs/:runId/cancel'],
    ['POST', '/v1/runs/:runId/interrupts/:nodeId'],
    ['POST', '/v1/runs/:runAction'],
    ['POST', '/v1/prompts::render'],
    // Without --prompts every method of these answers 501 (prompt-routes.ts).
    ['*', '/v1/prompts'],
    ['*', '/v1/prompts/*'],
    ['*', '/v1/prompts::render'],
  ]),
  ...rows(OPERATOR, [
    // Issue 20: registering or replacing a workflow decides what runs; versioned and recorded in the ledger.
    ['POST', '/v1/workflows'],
    ['POST', '/v1/prompts'],
    ['PUT', '/v1/prompts/:templateId'],
    ['DELETE', '/v1/prompts/:templateId'],
  ]),
  // Conformance seams (served only with --enable-test-seams; host-sample-test-seams.md): as before, client or operator.
  ...rows(RUN, [
    ['GET', '/v1/host/sample/replay/effect-count'],
    ['POST', '/v1/host/sample/test/mock-ai/program'],
    ['GET', '/v1/host/sample/test/runs/:runId/events'],
    ['POST', '/v1/host/sample/test/runs/:runId/variables'],
    ['POST', '/v1/host/sample/test/capability-toggle'],
    ['POST', '/v1/host/sample/envelope/accept'],
    ['POST', '/v1/host/sample/test/llm-cache-key'],
    ['POST', '/v1/host/sample/workflows'],
    // The same seams under the v2 seams profile (api/seams-v2.yaml), and its era-2 event-log seed (RFC 0176 §A).
    ['GET', '/conformance/seams/sample/replay/effect-count'],
    ['POST', '/conformance/seams/sample/test/mock-ai/program'],
    ['GET', '/conformance/seams/sample/test/runs/:runId/events'],
    ['POST', '/conformance/seams/sample/test/runs/:runId/variables'],
    ['POST', '/conformance/seams/sample/test/capability-toggle'],
    ['POST', '/conformance/seams/sample/envelope/accept'],
    ['POST', '/conformance/seams/sample/test/llm-cache-key'],
    ['POST', '/conformance/seams/sample/workflows'],
    ['POST', '/conformance/seams/sample/event-log/seed'],
    ['POST', '/conformance/seams/sample/effect-seams/fire'],
    ['POST', '/conformance/seams/sample/test/idempotency/effect-retry'],
    ['POST', '/conformance/seams/sample/mcp/invoke'],
  ]),
  // OpenWOP major 2 (unversioned paths).
  ...rows(READ, [
    ['GET', '/runs'],
    ['GET', '/runs/:runId'],
    ['GET', '/runs/:runId/events'],
    ['GET', '/runs/:runId/events/poll'],
    ['GET', '/runs/:runId/ancestry'],
    ['GET', '/workflows/:workflowId'],
    ['GET', '/agents'],
    ['GET', '/agents/:agentId'],
    ['GET', '/prompts'],
    ['GET', '/prompts/:templateId'],
    ['GET', '/host/effect-seams'],
    ['GET', '/runs/:runId/effects'],
  ]),
  ...rows(RUN, [
    ['POST', '/runs'],
    ['POST', '/runs/:runId/cancel'],
    ['POST', '/runs::bulk-cancel'],
    ['POST', '/runs/:runAction'],
    ['POST', '/runs/:runId/interrupts/:nodeId'],
    ['POST', '/prompts::render'],
  ]),
  ...rows(OPERATOR, [
    ['POST', '/prompts'],
    ['PUT', '/prompts/:templateId'],
    ['DELETE', '/prompts/:templateId'],
  ]),
  // Operator API (operator-routes.ts, hosts-route.ts): reads for every non-agent role, actions for operators.
  ...rows(READ, [
    ['GET', '/v1/operator/whoami'],
    ['GET', '/v1/operator/approvals'],
    ['GET', '/v1/operator/approvals/:id'],
    ['GET', '/v1/operator/permits'],
    ['GET', '/v1/operator/endpoints'],
    ['GET', '/v1/operator/devices'],
    ['GET', '/v1/operator/ledger'],
    ['GET', '/v1/operator/gates'],
    ['GET', '/v1/operator/events'],
    ['GET', '/v1/operator/hosts'],
    ['GET', '/v1/operator/routes'],
  ]),
  ...rows(OPERATOR, [
    ['POST', '/v1/operator/approvals/:id/approve'],
    ['POST', '/v1/operator/approvals/:id/deny'],
    ['POST', '/v1/operator/permits/:id/revoke'],
    ['POST', '/v1/operator/estop'],
    ['POST', '/v1/operator/estop/allow'],
    ['POST', '/v1/operator/reset'],
    ['POST', '/v1/operator/endpoints/enable'],
    ['POST', '/v1/operator/endpoints/disable'],
    ['POST', '/v1/operator/ledger/verify'],
    ['POST', '/v1/operator/ledger/export'],
  ]),
  ...rows(AGENT, [
    ['GET', '/mcp'],
    ['POST', '/mcp'],
    ['DELETE', '/mcp'],
  ]),
];

/**
 * The row for a registered route: an exact method row first, else the URL's `*` row; HEAD is GET's twin. A route
 * the router registered for many methods at once (`app.all`, `anyMethod`) takes the URL's `*` row first when it has
 * one: without `--prompts` every method of `/v1/prompts` answers 501 to any run API role.
 */
export function routeRoleOf(
  method: string,
  url: string,
  table: readonly RouteRoleRow[] = ROUTE_ROLES,
  anyMethod = false,
): RouteRoleRow | undefined {
  const any = table.find((r) => r.url === url && r.method === '*');
  if (anyMethod && any) return any;
  const m = method === 'HEAD' && table.some((r) => r.method === 'GET' && r.url === url) ? 'GET' : method;
  return table.find((r) => r.url === url && r.method === m) ?? any;
}
