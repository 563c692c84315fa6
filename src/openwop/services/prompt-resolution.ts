import { ErrorCode, isoAt } from '../../core/index.js';
import { NodeFailure } from '../node-registry.js';
import type { NodeContext } from '../node-registry.js';
import type { RunEventInput } from '../types.js';
import { composeTemplate } from './prompt-compose.js';
import type { Composition } from './prompt-compose.js';
import type { PromptLibraryEntry, PromptTemplate } from './prompt-library-surface.js';
import { formatPromptRef, parsePromptRef } from './prompt-refs.js';
import type { ParsedPromptRef } from './prompt-refs.js';
import type { PromptStore } from './prompt-store.js';

export type PromptKind = PromptTemplate['kind'];

/** The four kinds, each accepted (advertised as `prompts.templateKinds`). */
export const PROMPT_KINDS: readonly PromptKind[] = ['system', 'user', 'few-shot', 'schema-hint'];

/** `prompt.composed` observability (capabilities `prompts.observability`; `off` is not offered). */
export type PromptObservability = 'hashed' | 'full';

/** One resolved slot of a node's prompt configuration. */
export interface ResolvedPrompt {
  kind: PromptKind;
  /** Pinned stringy ref (`prompt:<id>@<version>`). */
  ref: string;
  template: PromptTemplate;
  composition: Composition;
}

/** What a node's prompt refs composed to (RFC 0027 §E). */
export interface NodePrompts {
  prompts: ResolvedPrompt[];
  /** Bodies joined in system → schema-hint → few-shot → user order (empty when nothing resolved). */
  text: string;
  system: string;
  user: string;
}

interface ChainEntry {
  layer: string;
  applied: boolean;
  source?: string;
  reason?: string;
}

interface Slot {
  kind: PromptKind;
  chain: ChainEntry[];
  /** The winning candidate as configured, or undefined when no layer had one. */
  candidate?: ParsedPromptRef;
}

// Canonical dispatch order: composition concatenates in this order (fixture conformance-prompt-all-four-kinds).
const FIELDS: Array<[PromptKind, string]> = [
  ['system', 'systemPromptRef'],
  ['schema-hint', 'schemaHintPromptRef'],
  ['few-shot', 'fewShotPromptRefs'],
  ['user', 'userPromptRef'],
];

const COMPOSED_KIND: Record<PromptKind, string> = {
  system: 'system-only',
  'schema-hint': 'system-only', // host policy: schema hints are injected into the system message
  'few-shot': 'user-only', // host policy: examples prefix the user message
  user: 'user-only',
};

function candidateOf(raw: unknown, where: string): ParsedPromptRef {
  const p = parsePromptRef(raw);
  if (!p.ok) {
    throw new NodeFailure(ErrorCode.PROMPT_REF_INVALID, `${where} is not a PromptRef`, {
      where,
      errors: p.errors,
    });
  }
  return p.ref;
}

/** Resolves PromptRefs in node config against the library, emitting RFC 0029 / RFC 0027 events. */
export class PromptResolver {
  constructor(
    private readonly store: PromptStore,
    private readonly opts: { observability: PromptObservability; defaults: Partial<Record<PromptKind, unknown>> },
  ) {}

  /** The library entry for a pinned ref, or a `NodeFailure` (`prompt_ref_unpinned`, `prompt_not_found`, ...). */
  async get(ref: unknown, allowUnpinned = false): Promise<PromptLibraryEntry> {
    const p = candidateOf(ref, 'PromptRef');
    const shown = formatPromptRef(p);
    let version = p.version;
    if (!version) {
      if (!allowUnpinned) {
        throw new NodeFailure(ErrorCode.PROMPT_REF_UNPINNED, `${shown} has no @version; pin it`, { ref: shown });
      }
      version = (await this.store.versions(p.templateId)).at(-1);
      if (!version) throw new NodeFailure(ErrorCode.PROMPT_NOT_FOUND, `${shown} is not in the library`, { ref: shown });
    }
    const template = await this.store.get(p.templateId, version);
    if (!template) {
      const available = await this.store.versions(p.templateId);
      if (!available.length) {
        throw new NodeFailure(ErrorCode.PROMPT_NOT_FOUND, `${shown} is not in the library`, { ref: shown });
      }
      throw new NodeFailure(ErrorCode.PROMPT_VERSION_PINNED, `${shown} is not in the library`, {
        ref: shown,
        available,
      });
    }
    const entry: PromptLibraryEntry = {
      promptId: formatPromptRef(template),
      systemPrompt: template.text,
      version: template.version,
      template,
    };
    if (typeof template.modelHints?.envelopeType === 'string') entry.envelopeType = template.modelHints.envelopeType;
    return entry;
  }

  private slots(ctx: NodeContext): Slot[] {
    const config = ctx.node.config;
    const wfDefaults = ((ctx.workflow?.defaults as { promptRefs?: Record<string, unknown> } | undefined)?.promptRefs ??
      {}) as Record<string, unknown>;
    const out: Slot[] = [];
    for (const [kind, field] of FIELDS) {
      const nodeValues: unknown[] =
        kind === 'few-shot'
          ? Array.isArray(config[field])
            ? (config[field] as unknown[]).filter((v) => v !== undefined && v !== null && v !== '')
            : []
          : config[field] === undefined || config[field] === null || config[field] === ''
            ? []
            : [config[field]];
      const count = Math.max(1, nodeValues.length);
      for (let i = 0; i < count; i++) {
        const layers: Array<[string, unknown, string?]> = [
          ['node', nodeValues[i]],
          [
            'agent-overrides',
            undefined,
            config.agentId === undefined ? 'no config.agentId' : 'prompts.agentBindings not advertised',
          ],
          ['workflow-defaults', i === 0 ? wfDefaults[kind] : undefined],
          ['host-defaults', i === 0 ? this.opts.defaults[kind] : undefined],
        ];
        const slot: Slot = { kind, chain: [] };
        for (const [layer, raw, reason] of layers) {
          if (raw === undefined) {
            slot.chain.push({ layer, applied: false, reason: reason ?? 'no candidate at this layer' });
            continue;
          }
          const c = candidateOf(raw, `${layer} ${kind} ref`);
          const applied = slot.candidate === undefined;
          if (applied) slot.candidate = c;
          slot.chain.push({
            layer,
            applied,
            source: formatPromptRef(c),
            ...(applied ? {} : { reason: 'superseded by a higher-precedence layer' }),
          });
        }
        out.push(slot);
      }
    }
    return out;
  }

  /**
   * Resolves every `(node, kind)` slot (RFC 0029 §A: node → agent → workflow defaults → host defaults), emits one
   * `agent.promptResolved` per slot, composes each resolved template and emits one `prompt.composed` per body.
   * Idempotent across a restart: slots already recorded in the node's history keep their recorded pin, and events
   * already in the log are not appended again.
   */
  async composeForNode(ctx: NodeContext): Promise<NodePrompts> {
    const slots = this.slots(ctx);
    const hist = ctx.history;
    const recorded = hist.filter((e) => e.type === 'agent.promptResolved');
    const composedBefore = hist.filter((e) => e.type === 'prompt.composed').length;
    const resolvedEvents: RunEventInput[] = [];
    const pins: Array<string | null> = [];
    for (const [i, slot] of slots.entries()) {
      const prior = recorded[i];
      let pin: string | null;
      if (prior) pin = (prior.payload.resolved as string | null) ?? null;
      else pin = slot.candidate ? (await this.get(slot.candidate, true)).promptId : null;
      pins.push(pin);
      if (!prior) {
        resolvedEvents.push({
          type: 'agent.promptResolved',
          payload: {
            nodeId: ctx.node.id,
            kind: slot.kind,
            chain: slot.chain,
            resolved: pin,
            ...(typeof ctx.node.config.agentId === 'string' ? { agentId: ctx.node.config.agentId } : {}),
          },
        });
      }
    }
    if (resolvedEvents.length) await ctx.emit(resolvedEvents);

    const sources = {
      input: ctx.inputs,
      variable: ctx.variables as Record<string, unknown>,
      context: {
        runId: ctx.runId,
        nodeId: ctx.node.id,
        workflowId: ctx.workflow?.id,
        workflowName: ctx.workflow?.name,
        now: isoAt(await ctx.checkpoint('prompts:now', () => ctx.clock.now())),
      },
    };
    const prompts: ResolvedPrompt[] = [];
    const composedEvents: RunEventInput[] = [];
    for (const [i, slot] of slots.entries()) {
      const pin = pins[i];
      if (!pin) continue;
      const entry = await this.get(pin);
      const overrides = slot.candidate?.variableOverrides;
      const composition = composeTemplate(pin, entry.template, { ...sources, ...(overrides ? { overrides } : {}) });
      prompts.push({ kind: slot.kind, ref: pin, template: entry.template, composition });
      if (entry.template.kind !== slot.kind) {
        composedEvents.push({
          type: 'log.appended',
          payload: {
            level: 'warn',
            message: `${pin} is a ${entry.template.kind} template used as ${slot.kind}`,
            nodeId: ctx.node.id,
            fields: { code: 'prompt_kind_mismatch', ref: pin, kind: slot.kind },
          },
        });
      }
      const payload: Record<string, unknown> = {
        nodeId: ctx.node.id,
        refs: [pin],
        kind: COMPOSED_KIND[slot.kind],
        hash: composition.hash,
        variableHashes: composition.variableHashes,
      };
      if (this.opts.observability === 'full') {
        payload.composed = composition.text;
        if (slot.kind === 'system') payload.systemPrompt = composition.text;
        if (slot.kind === 'user') payload.userPrompt = composition.text;
        payload.variableBindings = composition.bindings;
      }
      composedEvents.push({ type: 'prompt.composed', payload });
    }
    // One append holds every composition, so after a restart the batch is either all there or absent.
    if (composedBefore === 0 && composedEvents.length) await ctx.emit(composedEvents);
    const join = (kinds: PromptKind[]): string =>
      prompts
        .filter((p) => kinds.includes(p.kind))
        .map((p) => p.composition.text)
        .join('\n\n');
    return {
      prompts,
      text: prompts.map((p) => p.composition.text).join('\n\n'),
      system: join(['system', 'schema-hint']),
      user: join(['few-shot', 'user']),
    };
  }
}
