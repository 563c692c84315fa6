import type { Clock } from '../../core/index.js';
import type { Db } from '../../ledger/index.js';
import type { NodeContext } from '../node-registry.js';
import { openwopSchemas, schemaId } from '../schemas.js';
import type { ServiceFamily } from '../service-family.js';
import { OpenwopStore } from '../store.js';
import type { EnvelopeModel } from './ai-envelope-model.js';
import { agentRuntimeSurface } from './agent-runtime.js';
import { providerUsageCapability } from './provider-usage.js';
import type { AgentRuntimeDeps, RuntimeManifest } from './agent-runtime.js';
import type { AgentRuntimeSurface } from './agent-runtime-surface.js';

/** Options of {@link createAgentRuntimeFamily}. */
export interface AgentRuntimeFamilyOptions {
  db: Db;
  clock: Clock;
  /** Asked for delegation choices and consensus votes (the CLI's scripted provider; no network). */
  model: EnvelopeModel;
  /** Agent manifests (agent-manifest.schema.json) the runtime can spawn; invalid ones are refused. */
  manifests?: readonly unknown[];
  /** Most agents spawned per run (default 16). */
  maxInstancesPerRun?: number;
  /**
   * Set only when the host also meets `agents.manifestRuntime` (RFC 0070: installAgents from packs, dispatch of a
   * manifest agent on core.dispatch, toolAllowlist enforcement), which advertising `agentRuntime` implies
   * (RFC 0144 §agentRuntime). Without it the family neither advertises nor binds `ctx.agentRuntime`, so a node that
   * requires it fails `host_capability_missing`.
   */
  manifestRuntimeMet?: boolean;
}

/** The agent runtime family, its installed manifests and the manifests it refused. */
export interface AgentRuntimeFamily extends ServiceFamily {
  readonly manifests: ReadonlyMap<string, RuntimeManifest>;
  readonly refused: Array<{ index: number; errors: unknown[] }>;
  /** The surface for one node execution, whether or not the family advertises (integration and tests). */
  surfaceFor(ctx: NodeContext): AgentRuntimeSurface;
}

/**
 * `ctx.agentRuntime` (RFC 0144 §agentRuntime): spawn, delegate, consensus and messageSend over the run's event log
 * (durable, once per idempotency key, deterministic on replay). Advertised only with `manifestRuntimeMet`.
 */
export function createAgentRuntimeFamily(o: AgentRuntimeFamilyOptions): AgentRuntimeFamily {
  const manifests = new Map<string, RuntimeManifest>();
  const refused: Array<{ index: number; errors: unknown[] }> = [];
  (o.manifests ?? []).forEach((m, index) => {
    const errors = openwopSchemas().check(schemaId('agent-manifest'), m);
    if (errors.length) refused.push({ index, errors });
    else manifests.set((m as RuntimeManifest).agentId, m as RuntimeManifest);
  });
  const reader = new OpenwopStore(o.db, o.clock);
  const deps: AgentRuntimeDeps = {
    model: o.model,
    manifests,
    runEvents: (runId) => reader.events(runId),
    maxInstancesPerRun: o.maxInstancesPerRun ?? 16,
  };
  const advertise = o.manifestRuntimeMet === true;
  return {
    name: 'agentRuntime',
    manifests,
    refused,
    surfaceFor: (ctx) => agentRuntimeSurface(ctx, deps),
    capabilities: () =>
      advertise
        ? {
            agentRuntime: { supported: true },
            agents: { manifestRuntime: { supported: true } },
            ...providerUsageCapability(o.model),
          }
        : {},
    ...(advertise ? { bind: (ctx: NodeContext) => ({ agentRuntime: agentRuntimeSurface(ctx, deps) }) } : {}),
  };
}
