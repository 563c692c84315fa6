import { join } from 'node:path';
import type { Clock } from '../../core/index.js';
import type { Db } from '../../ledger/index.js';
import { callPromptNode } from '../nodes/call-prompt-node.js';
import { mockAiNode } from '../nodes/mock-ai-node.js';
import { REPO_ROOT } from '../schemas.js';
import type { ServiceFamily } from '../service-family.js';
import { VARIABLE_SOURCES } from './prompt-compose.js';
import { parsePromptRef } from './prompt-refs.js';
import { PROMPT_KINDS, PromptResolver } from './prompt-resolution.js';
import type { PromptKind, PromptObservability } from './prompt-resolution.js';
import { MAX_TEMPLATE_BYTES, PromptStore } from './prompt-store.js';
import { MAX_RENDER_REQUEST_BYTES, PromptLibraryApi } from './prompt-library-api.js';
import type { RefusedTemplate } from './prompt-store.js';
import { ErrorCode, HostError } from '../../core/index.js';

/** The conformance templates shipped with the host (the refs conformance-prompt-all-four-kinds names). */
export const BUILTIN_PROMPTS_DIR = join(REPO_ROOT, 'prompts/conformance');

/** Options of {@link createPromptLibraryFamily}. */
export interface PromptLibraryFamilyOptions {
  db: Db;
  clock: Clock;
  /** Folders of template JSON files to seed from, after the built-in conformance templates. */
  dirs?: readonly string[];
  /** Seed the built-in conformance templates (default true). */
  builtin?: boolean;
  /** `prompt.composed` bodies in the log (`full`) or hashes only (`hashed`, the spec default). */
  observability?: PromptObservability;
  /** Per-kind host-default PromptRefs (resolution layer 4; advertised as `prompts.defaults`). */
  defaults?: Partial<Record<PromptKind, unknown>>;
}

/** The prompt library family and what seeding it did. */
export interface PromptLibraryFamily extends ServiceFamily {
  readonly store: PromptStore;
  readonly resolver: PromptResolver;
  /** The library behind the `/v1/prompts*` REST surface (RFC 0028 Phase B). */
  readonly api: PromptLibraryApi;
  /** Refs stored or already present, and files refused with their code. */
  readonly seeded: { loaded: string[]; refused: RefusedTemplate[] };
}

/**
 * `ctx.promptLibrary` (RFC 0144) plus node-execution PromptRef resolution (RFC 0027 Phase A, RFC 0029 chain):
 * seeds the durable library from template files, installs `local.sample.demo.mock-ai` and `local.ai.callPrompt`
 * (which also needs aiEnvelope), and advertises
 * `promptLibrary` and `prompts.supported`, and the `/v1/prompts*` REST surface the server mounts from `api`
 * (`endpointsSupported`, `mutableLibrary`; no prompt packs).
 * @throws HostError `MHS.HOST.CONFIG_INVALID` for an unreadable folder or an invalid default ref.
 */
export async function createPromptLibraryFamily(o: PromptLibraryFamilyOptions): Promise<PromptLibraryFamily> {
  const store = new PromptStore(o.db, o.clock);
  await store.init();
  const defaults = o.defaults ?? {};
  for (const [kind, ref] of Object.entries(defaults)) {
    if (!parsePromptRef(ref).ok)
      throw new HostError(ErrorCode.HOST_CONFIG_INVALID, `prompt default for ${kind} is not a PromptRef`, { kind });
  }
  const observability = o.observability ?? 'hashed';
  const seeded = { loaded: [] as string[], refused: [] as RefusedTemplate[] };
  for (const dir of [...(o.builtin === false ? [] : [BUILTIN_PROMPTS_DIR]), ...(o.dirs ?? [])]) {
    const r = await store.seedDir(dir);
    seeded.loaded.push(...r.loaded);
    seeded.refused.push(...r.refused);
  }
  const resolver = new PromptResolver(store, { observability, defaults });
  return {
    name: 'promptLibrary',
    store,
    resolver,
    api: new PromptLibraryApi(store, o.clock, observability),
    seeded,
    capabilities: () => ({
      promptLibrary: { supported: true },
      prompts: {
        supported: true,
        endpointsSupported: true,
        mutableLibrary: true,
        packsSupported: false,
        maxTemplateBytes: MAX_TEMPLATE_BYTES,
        library: { renderEndpoint: '/v1/prompts:render', maxRenderRequestBytes: MAX_RENDER_REQUEST_BYTES },
        templateKinds: [...PROMPT_KINDS],
        variableSources: [...VARIABLE_SOURCES],
        observability,
        agentBindings: false,
        ...(Object.keys(defaults).length ? { defaults } : {}),
      },
    }),
    nodes: [mockAiNode(resolver), callPromptNode(resolver)],
    bind: () => ({ promptLibrary: { get: (ref) => resolver.get(ref) } }),
  };
}

/** The prompt library's REST-surface API among installed families, when `--prompts` installed one. */
export function promptLibraryApiOf(families: readonly ServiceFamily[] | undefined): PromptLibraryApi | undefined {
  const f = families?.find((x) => x.name === 'promptLibrary') as Partial<PromptLibraryFamily> | undefined;
  return f?.api instanceof PromptLibraryApi ? f.api : undefined;
}
