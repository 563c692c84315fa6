import { ErrorCode, isJsonObject } from '../core/index.js';
import { NodeFailure } from './node-registry.js';
import type { NodeContext, NodeModule } from './node-registry.js';
import type { WorkflowNode } from './types.js';
import type { AgentRuntimeSurface } from './services/agent-runtime-surface.js';
import type { AiEnvelopeSurface } from './services/ai-envelope-surface.js';
import type { McpSurface } from './services/mcp-surface.js';
import type { PromptLibrarySurface } from './services/prompt-library-surface.js';

/** The host service surfaces a node pack reaches through `ctx` (RFC 0144). */
export interface NodeServices {
  aiEnvelope: AiEnvelopeSurface;
  promptLibrary: PromptLibrarySurface;
  agentRuntime: AgentRuntimeSurface;
  mcp: McpSurface;
}

export type ServiceName = keyof NodeServices;

/**
 * One advertised host service family: what it adds to the discovery document, the node types it brings and the
 * `ctx` surface it binds for each node execution. A host lists a family in its capabilities only by installing it,
 * so the advertisement and the surface cannot drift apart.
 */
export interface ServiceFamily {
  readonly name: string;
  /** Fragment deep-merged into the capabilities document (capabilities.schema.json). */
  capabilities(): Record<string, unknown>;
  /**
   * Records this family adds to the closed v2 discovery root where its major-2 record carries more than the v1
   * fragment (`{witness, …facets}`; `status`/`since` are added by the root). Built on each read of the root.
   */
  v2Records?(): Record<string, Record<string, unknown>>;
  readonly nodes?: readonly NodeModule[];
  /** Host-provided workflow definitions the host registers at start (e.g. one per installed manifest agent). */
  workflows?(): readonly unknown[];
  /** The `ctx` surfaces for one node execution (bound to its run, node and event log). */
  bind?(ctx: NodeContext): Partial<NodeServices>;
  /** Runs `node` under an execution layer (e.g. agent identity for an agent-pinned node); undefined leaves it as is. */
  wrap?(node: WorkflowNode, mod: NodeModule): NodeModule | undefined;
  close?(): Promise<void>;
}

/** Deep-merges capability fragments: objects merge key by key, anything else is replaced by the later fragment. */
export function mergeCapabilities(...docs: Array<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const doc of docs) {
    for (const [k, v] of Object.entries(doc)) {
      const prev = out[k];
      out[k] = isJsonObject(prev) && isJsonObject(v) ? mergeCapabilities(prev, v) : v;
    }
  }
  return out;
}

/** The v2 records of every family (see {@link ServiceFamily.v2Records}). */
export function v2RecordsOf(families: readonly ServiceFamily[]): Record<string, Record<string, unknown>> {
  return Object.assign({}, ...families.map((f) => f.v2Records?.() ?? {})) as Record<string, Record<string, unknown>>;
}

/** The surfaces of every family for one node execution. */
export function bindServices(families: readonly ServiceFamily[], ctx: NodeContext): Partial<NodeServices> {
  const out: Partial<NodeServices> = {};
  for (const f of families) Object.assign(out, f.bind?.(ctx));
  return out;
}

/** The executor of `node` after every family's {@link ServiceFamily.wrap}. */
export function wrapModule(families: readonly ServiceFamily[], node: WorkflowNode, mod: NodeModule): NodeModule {
  let m = mod;
  for (const f of families) m = f.wrap?.(node, m) ?? m;
  return m;
}

/**
 * Makes one node execution ready: binds every family's surfaces into `ctx`, wraps the executor, and refuses a node
 * whose `requires` names a family the host does not provide (`host_capability_missing`, RFC 0144).
 */
export function prepareExecution(families: readonly ServiceFamily[], ctx: NodeContext, mod: NodeModule): NodeModule {
  Object.assign(ctx, bindServices(families, ctx));
  const wrapped = wrapModule(families, ctx.node, mod);
  const missing = (wrapped.requires ?? []).filter((name) => ctx[name] === undefined);
  if (missing.length) {
    throw new NodeFailure(
      ErrorCode.HOST_CAPABILITY_MISSING,
      `${ctx.node.typeId} needs the host service ${missing.join(', ')}, which this host does not provide`,
      { typeId: ctx.node.typeId, missing },
    );
  }
  return wrapped;
}
