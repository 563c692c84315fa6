import { aiEnvelopeNode } from '../nodes/ai-envelope-node.js';
import type { ServiceFamily } from '../service-family.js';
import { generateEnvelope } from './ai-envelope-generate.js';
import type { EnvelopeLimits } from './ai-envelope-generate.js';
import type { EnvelopeModel, ModelFor } from './ai-envelope-model.js';
import { namedModel } from './named-model.js';
import { reliabilityCapability } from './envelope-reliability.js';
import { EnvelopeCatalog } from './envelope-validation.js';
import { providerUsageCapability } from './provider-usage.js';

/** Options of {@link createAiEnvelopeFamily}. */
export interface AiEnvelopeFamilyOptions {
  /** The model (the CLI passes the scripted provider of `src/ai`, or the `serve --model` provider). */
  model: EnvelopeModel;
  /** The models a request may name with `provider` + `model` (unset: those fields are ignored). */
  modelFor?: ModelFor;
  /** The model a run names with `RunOptions.configurable.model` (unset: that key is ignored). */
  runModelOf?: (value: string) => EnvelopeModel | undefined;
  /** Vendor envelope kinds with their payload JSON Schemas, e.g. `{"vendor.mhs.summary": {...}}`. */
  envelopes?: Record<string, object>;
  /** Invalid answers / schema requests allowed per generation (default 2). */
  schemaRounds?: number;
  /** Clarification requests per generation lifted to a clarification interrupt (default 2; 0 refuses them). */
  clarificationRounds?: number;
}

/**
 * `ctx.aiEnvelope.generate` (RFC 0144 §aiEnvelope) over a model provider. Advertises `aiEnvelope`, the envelope
 * catalog (`supportedEnvelopes`: the universal four plus configured kinds) and the limits it enforces
 * (`clarificationRounds`: clarification requests lifted to a clarification interrupt; `schemaRounds`;
 * `envelopesPerTurn: 1`) and the envelope-reliability events it emits (RFC 0032/0033). It does not
 * expose or advertise `aiEnvelope.await`. Installs the `local.ai.envelope` node.
 * @throws HostError `MHS.HOST.CONFIG_INVALID` for a bad envelope kind or schema.
 */
export function createAiEnvelopeFamily(
  o: AiEnvelopeFamilyOptions,
): ServiceFamily & { readonly catalog: EnvelopeCatalog } {
  const catalog = new EnvelopeCatalog(o.envelopes ?? {});
  const limits: EnvelopeLimits = {
    clarificationRounds: o.clarificationRounds ?? 2,
    schemaRounds: o.schemaRounds ?? 2,
    envelopesPerTurn: 1,
  };
  return {
    name: 'aiEnvelope',
    catalog,
    capabilities: () => ({
      aiEnvelope: { supported: true },
      supportedEnvelopes: catalog.kinds(),
      limits: { ...limits },
      ...providerUsageCapability(o.model),
      ...reliabilityCapability(limits.schemaRounds),
    }),
    nodes: [aiEnvelopeNode],
    bind: (ctx) => ({
      aiEnvelope: {
        generate: async (request) => {
          // A request naming both provider and model runs on that model when the host has a factory; else the
          // run's `configurable.model` (run-options.md §Reserved keys); else the family's model.
          const named = o.modelFor && typeof request?.provider === 'string' && typeof request.model === 'string';
          const runModel = typeof ctx.configurable?.model === 'string' ? ctx.configurable.model : undefined;
          const model = named
            ? namedModel(o.modelFor!, request.provider!, request.model!)
            : runModel !== undefined && o.runModelOf
              ? namedModel((_p, m) => o.runModelOf!(m), 'configurable.model', runModel)
              : o.model;
          return generateEnvelope(ctx, { model, catalog, limits }, request);
        },
      },
    }),
  };
}

/** The envelope catalog of the installed `aiEnvelope` family, if any (the conformance envelope/accept seam uses it). */
export function envelopeCatalogOf(families: readonly ServiceFamily[] | undefined): EnvelopeCatalog | undefined {
  const f = families?.find((x) => x.name === 'aiEnvelope') as { catalog?: unknown } | undefined;
  return f?.catalog instanceof EnvelopeCatalog ? f.catalog : undefined;
}
