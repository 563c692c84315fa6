import type { ServiceFamily } from '../service-family.js';
import { AgentRegistry } from './agent-registry.js';
import type { InstalledAgent } from './agent-registry.js';
import { redact } from './manifest-agent-node.js';

/**
 * One entry of `GET /v1/agents` (RFC 0072 §A, agent-inventory-response.schema.json `AgentInventoryEntry`): a read
 * projection of an installed AgentManifest. Never the system-prompt body, the resolved handoff schemas or any
 * credential material (SR-1).
 */
export interface AgentInventoryEntry {
  agentId: string;
  persona: string;
  label: string;
  description?: string;
  modelClass: string;
  packName: string;
  packVersion: string;
  toolAllowlist: string[];
  hasHandoffSchemas: boolean;
  memoryShape?: { scratchpad?: boolean; conversation?: boolean; longTerm?: boolean };
  confidenceThreshold?: number;
}

/** The body of `GET /v1/agents`: installed agents sorted by agentId, and their count. */
export interface AgentInventoryResponse {
  agents: AgentInventoryEntry[];
  total: number;
}

/**
 * JSON Schema of {@link AgentInventoryEntry}, transcribed from the spec's agent-inventory-response.schema.json
 * (openwop/openwop `schemas/`, RFC 0072 §A; not in vendor/openwop): the fields this host emits, closed.
 */
export const AGENT_INVENTORY_ENTRY_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: [
    'agentId',
    'persona',
    'label',
    'modelClass',
    'packName',
    'packVersion',
    'toolAllowlist',
    'hasHandoffSchemas',
  ],
  properties: {
    agentId: { type: 'string' },
    persona: { type: 'string' },
    label: { type: 'string' },
    description: { type: 'string' },
    modelClass: { type: 'string' },
    packName: { type: 'string' },
    packVersion: { type: 'string' },
    toolAllowlist: { type: 'array', items: { type: 'string' } },
    hasHandoffSchemas: { type: 'boolean' },
    memoryShape: {
      type: 'object',
      additionalProperties: false,
      properties: {
        scratchpad: { type: 'boolean' },
        conversation: { type: 'boolean' },
        longTerm: { type: 'boolean' },
      },
    },
    confidenceThreshold: { type: 'number', minimum: 0, maximum: 1 },
    degraded: { type: 'array', items: { type: 'string' } },
  },
} as const;

/** JSON Schema of {@link AgentInventoryResponse} (agent-inventory-response.schema.json, top level). */
export const AGENT_INVENTORY_RESPONSE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['agents', 'total'],
  properties: {
    agents: { type: 'array', items: AGENT_INVENTORY_ENTRY_SCHEMA },
    total: { type: 'integer', minimum: 0 },
  },
} as const;

/** The inventory entry of an installed agent, every secret plaintext replaced by `[redacted]` (SR-1). */
export function inventoryEntry(a: InstalledAgent, secrets: readonly string[] = []): AgentInventoryEntry {
  const m = a.manifest as InstalledAgent['manifest'] & {
    label?: string;
    description?: string;
    toolAllowlist?: string[];
    memoryShape?: AgentInventoryEntry['memoryShape'];
    confidence?: { defaultThreshold?: number };
  };
  const entry: AgentInventoryEntry = {
    agentId: m.agentId,
    persona: m.persona,
    label: m.label ?? m.persona,
    ...(m.description !== undefined ? { description: m.description } : {}),
    modelClass: m.modelClass,
    packName: a.pack.name,
    packVersion: a.pack.version,
    toolAllowlist: [...(m.toolAllowlist ?? [])],
    hasHandoffSchemas: a.taskSchema !== undefined || a.returnSchema !== undefined,
    ...(m.memoryShape ? { memoryShape: { ...m.memoryShape } } : {}),
    ...(m.confidence?.defaultThreshold !== undefined ? { confidenceThreshold: m.confidence.defaultThreshold } : {}),
  };
  return redact(entry, secrets);
}

/** The host-global agent inventory (RFC 0074 `installScope: "host"`: the same set for every caller). */
export interface AgentInventory {
  list(): AgentInventoryResponse;
  get(agentId: string): AgentInventoryEntry | undefined;
}

/** The inventory over the manifest-runtime family's registry, when that family is installed (else undefined). */
export function agentInventoryOf(families: readonly ServiceFamily[] | undefined): AgentInventory | undefined {
  const f = families?.find((x) => x.name === 'manifestRuntime') as
    (ServiceFamily & { registry?: unknown; secrets?: () => readonly string[] }) | undefined;
  if (!f || !(f.registry instanceof AgentRegistry)) return undefined;
  const registry = f.registry;
  const secrets = (): readonly string[] => f.secrets?.() ?? [];
  return {
    list: () => {
      const s = secrets();
      const agents = registry.list().map((a) => inventoryEntry(a, s));
      return { agents, total: agents.length };
    },
    get: (agentId) => {
      const a = registry.get(agentId);
      return a ? inventoryEntry(a, secrets()) : undefined;
    },
  };
}
