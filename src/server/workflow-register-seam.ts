import type { FastifyInstance } from 'fastify';
import { ErrorCode, HostError, isJsonObject } from '../core/index.js';
import type { OpenwopHost } from '../openwop/host.js';
import { callerOf } from './auth.js';
import type { CapabilityOverlay } from './capability-overlay.js';
import { V1_SEAMS } from './seam-mount.js';
import type { SeamMount } from './seam-mount.js';

/** The seam's path (the conformance scenarios' runtime workflow registration). */
export const WORKFLOW_REGISTER_SEAM_PATH = `${V1_SEAMS.prefix}/workflows`;

/** Mapping fields per node type that need a capability claim at registration (RFC 0022 §C). */
const MAPPING_RULES: ReadonlyArray<{ typeIds: readonly string[]; fields: readonly string[]; capability: string }> = [
  {
    typeIds: ['core.dispatch'],
    fields: ['inputMapping', 'outputMapping', 'perWorkerInputMappings', 'perWorkerOutputMappings'],
    capability: 'agents.dispatchMapping',
  },
  {
    typeIds: ['core.subWorkflow', 'core.control.subWorkflow'],
    fields: ['inputMapping', 'outputMapping'],
    capability: 'subWorkflow.inputMapping',
  },
];

const nonEmpty = (v: unknown): boolean =>
  Array.isArray(v) ? v.length > 0 : isJsonObject(v) && Object.keys(v).length > 0;

/**
 * The scenarios post a short form `{workflowId, nodes: [{nodeId, typeId, config?}], edges?}` (or a full definition,
 * bare or as `{definition}`); this fills the fields workflow-definition.schema.json requires and leaves every given
 * field as it is. Anything else is for the schema to refuse.
 */
export function definitionOf(body: Record<string, unknown>): Record<string, unknown> {
  if (isJsonObject(body.definition)) return body.definition;
  const { workflowId, ...rest } = body;
  const id = rest.id ?? workflowId;
  const nodes = Array.isArray(rest.nodes)
    ? rest.nodes.map((n: unknown) => {
        if (!isJsonObject(n)) return n;
        const { nodeId, ...node } = n;
        const nid = node.id ?? nodeId;
        return { id: nid, name: nid, position: { x: 0, y: 0 }, config: {}, inputs: {}, ...node };
      })
    : rest.nodes;
  const edges = Array.isArray(rest.edges)
    ? rest.edges.map((e: unknown, i) => (isJsonObject(e) ? { id: `e${i + 1}`, ...e } : e))
    : (rest.edges ?? []);
  return {
    name: id,
    version: '1.0',
    triggers: [],
    variables: [],
    metadata: {},
    settings: {},
    ...rest,
    id,
    nodes,
    edges,
  };
}

/**
 * `POST /v1/host/sample/workflows`: registers a definition at run time, through the same catalog and validation as
 * `POST /v1/workflows` (source `test-seam`); 201 `{workflowId, version}`. A node with a non-empty mapping field whose
 * capability the host does not claim (the capability toggle switched it off) is refused first: 400
 * `validation_error` with `details.nodeId` and `details.requiredCapability` (RFC 0022 §C). Anything the schema or the
 * node registry refuses is 400 `validation_error` with `details.errors`.
 */
export function registerWorkflowRegisterSeam(
  app: FastifyInstance,
  host: OpenwopHost,
  overlay: CapabilityOverlay,
  mount: SeamMount = V1_SEAMS,
): void {
  app.post(`${mount.prefix}/workflows`, async (req, reply) => {
    const who = callerOf(req);
    if (!isJsonObject(req.body))
      throw new HostError(ErrorCode.VALIDATION_ERROR, 'a workflow definition object', { errors: [] });
    const def = definitionOf(req.body);
    const doc = host.capabilities();
    for (const node of Array.isArray(def.nodes) ? def.nodes : []) {
      if (!isJsonObject(node)) continue;
      const config = isJsonObject(node.config) ? node.config : {};
      for (const rule of MAPPING_RULES) {
        if (!rule.typeIds.includes(String(node.typeId))) continue;
        if (rule.fields.some((f) => nonEmpty(config[f])) && !overlay.resolve(rule.capability, doc))
          throw new HostError(
            ErrorCode.VALIDATION_ERROR,
            `node ${String(node.id)} (${String(node.typeId)}) declares mappings; the host does not claim ${rule.capability}`,
            { nodeId: node.id, requiredCapability: rule.capability },
          );
      }
    }
    const { workflow: wf } = await host.catalog.registerAs(def, 'test-seam', {
      id: who.principal,
      name: who.name ?? who.principal,
      role: who.role ?? 'client',
    });
    return reply.status(201).send({ workflowId: wf.id, version: wf.version });
  });
}
