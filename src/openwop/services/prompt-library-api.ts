import { ErrorCode, HostError, isoAt, toHostError } from '../../core/index.js';
import type { Clock } from '../../core/index.js';
import { NodeFailure } from '../node-registry.js';
import { openwopSchemas, schemaId } from '../schemas.js';
import { composeTemplate } from './prompt-compose.js';
import type { PromptTemplate } from './prompt-library-surface.js';
import { compareSemver, formatPromptRef, parsePromptRef } from './prompt-refs.js';
import type { PromptObservability } from './prompt-resolution.js';
import type { PromptStore, StoredTemplate } from './prompt-store.js';

/** Provenance of a template (`PromptTemplate.meta.source`). */
export type PromptSource = 'host' | 'pack' | 'user';

/** The store's `source` of templates created through `POST`/`PUT /v1/prompts`. */
export const USER_SOURCE = 'user';

/** Hard cap on a `POST /v1/prompts:render` body (advertised as `prompts.library.maxRenderRequestBytes`). */
export const MAX_RENDER_REQUEST_BYTES = 262_144;

/** `GET /v1/prompts` filters and paging (RFC 0028 §A listPromptTemplates). */
export interface ListQuery {
  kind?: string;
  /** Every tag given must be in the template's `tags[]`. */
  tags?: string[];
  modelClass?: string;
  source?: PromptSource;
  cursor?: string;
  limit?: number;
}

/** A `POST /v1/prompts:render` body (validated by the caller). */
export interface RenderRequest {
  ref: unknown;
  variables: Record<string, unknown>;
  contentTrust?: 'trusted' | 'untrusted';
}

/** What `:render` answers (RFC 0028 §A renderPromptTemplate). */
export interface RenderResult {
  /** Present only under `prompts.observability: full`. */
  composed?: string;
  hash: string;
  refs: string[];
  variableHashes: Record<string, string>;
  contentTrust: 'trusted' | 'untrusted';
}

function provenance(source: string): PromptSource {
  if (source === USER_SOURCE) return 'user';
  if (source.startsWith('pack:')) return 'pack';
  return 'host';
}

/** The template as served: stored verbatim, `meta.source` set to its real provenance. */
function wire(s: StoredTemplate): PromptTemplate {
  const meta = (s.template.meta ?? {}) as Record<string, unknown>;
  return { ...s.template, meta: { ...meta, source: provenance(s.source) } };
}

const notFound = (templateId: string, details: Record<string, unknown> = {}): HostError =>
  new HostError(ErrorCode.NOT_FOUND, `prompt template ${templateId} is not in the library`, {
    templateId,
    ...details,
  });

const encodeCursor = (templateId: string): string => Buffer.from(JSON.stringify([templateId])).toString('base64url');

function decodeCursor(cursor: string): string {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === 1 && typeof v[0] === 'string') return v[0];
  } catch {
    // falls through to the refusal
  }
  throw new HostError(ErrorCode.VALIDATION_ERROR, 'cursor is not one this server returned', { path: 'query:cursor' });
}

/**
 * The prompt library behind `/v1/prompts*` (RFC 0028 §A): reads over the durable {@link PromptStore}, `:render`
 * through the same `composeTemplate` node execution uses (so its `hash` is the `prompt.composed` hash), and the
 * mutable-library operations on user templates: a new version is appended, a delete tombstones every version.
 * Host templates (seeded from folders) are read-only.
 */
export class PromptLibraryApi {
  constructor(
    private readonly store: PromptStore,
    private readonly clock: Clock,
    readonly observability: PromptObservability,
  ) {}

  /** The latest version of each template matching `q`, by templateId, one page. */
  async list(q: ListQuery): Promise<{ items: PromptTemplate[]; nextCursor?: string }> {
    const latest = new Map<string, StoredTemplate>();
    for (const s of await this.store.list()) latest.set(s.template.templateId, s); // sorted: the last is the latest
    const after = q.cursor ? decodeCursor(q.cursor) : undefined;
    const items = [...latest.values()]
      .filter((s) => after === undefined || s.template.templateId > after)
      .filter((s) => !q.kind || s.template.kind === q.kind)
      .filter((s) => !q.source || provenance(s.source) === q.source)
      .filter((s) => !q.modelClass || s.template.modelHints?.modelClass === q.modelClass)
      .filter((s) => {
        const tags = Array.isArray(s.template.tags) ? (s.template.tags as unknown[]) : [];
        return (q.tags ?? []).every((t) => tags.includes(t));
      });
    const limit = q.limit ?? 50;
    const page = items.slice(0, limit);
    const last = page.at(-1);
    return {
      items: page.map(wire),
      ...(items.length > limit && last ? { nextCursor: encodeCursor(last.template.templateId) } : {}),
    };
  }

  private async visible(templateId: string): Promise<StoredTemplate[]> {
    return (await this.store.list()).filter((s) => s.template.templateId === templateId);
  }

  /** `templateId` at `version`, or its latest version. @throws HostError `not_found` (details `available`). */
  async get(templateId: string, version?: string): Promise<PromptTemplate> {
    const all = await this.visible(templateId);
    if (!all.length) throw notFound(templateId);
    const hit = version ? all.find((s) => s.template.version === version) : all.at(-1);
    if (!hit) throw notFound(templateId, { version, available: all.map((s) => s.template.version) });
    return wire(hit);
  }

  /**
   * Composes `ref` with `variables` bound to every variable source (input, variable, context) and the ref's
   * `variableOverrides` above them, exactly as a node's composition does; under `contentTrust: untrusted` each
   * substituted value is wrapped in `<UNTRUSTED>` markers (so the hash differs from the trusted render).
   * @throws HostError `prompt_ref_invalid`, `not_found`, `prompt_variable_unresolved`.
   */
  async render(req: RenderRequest): Promise<RenderResult> {
    const p = parsePromptRef(req.ref);
    if (!p.ok) throw new HostError(ErrorCode.PROMPT_REF_INVALID, 'ref is not a PromptRef', { errors: p.errors });
    const template = await this.get(p.ref.templateId, p.ref.version);
    const pinned = formatPromptRef(template);
    const v = req.variables;
    let c;
    try {
      c = composeTemplate(pinned, template, {
        input: v,
        variable: v,
        context: v,
        ...(p.ref.variableOverrides ? { overrides: p.ref.variableOverrides } : {}),
        ...(req.contentTrust === 'untrusted' ? { untrusted: true } : {}),
      });
    } catch (err) {
      if (err instanceof NodeFailure) throw new HostError(err.code as ErrorCode, err.message, err.details);
      throw err;
    }
    return {
      ...(this.observability === 'full' ? { composed: c.text } : {}),
      hash: c.hash,
      refs: [pinned],
      variableHashes: c.variableHashes,
      contentTrust: req.contentTrust ?? 'trusted',
    };
  }

  private checkTemplate(body: unknown): PromptTemplate {
    openwopSchemas().assert(schemaId('prompt-template'), body, 'the body (PromptTemplate)');
    return body as PromptTemplate;
  }

  private readOnly(all: StoredTemplate[]): void {
    const other = all.find((s) => provenance(s.source) !== 'user');
    if (other) {
      throw new HostError(ErrorCode.FORBIDDEN, `prompt template ${other.template.templateId} is read-only`, {
        templateId: other.template.templateId,
        source: provenance(other.source),
      });
    }
  }

  private async append(t: PromptTemplate, createdAt: string): Promise<PromptTemplate> {
    const meta = { ...((t.meta ?? {}) as Record<string, unknown>) };
    const doc = { ...t, meta: { ...meta, source: 'user', createdAt, updatedAt: isoAt(this.clock.now()) } };
    // A version once stored (even deleted since) is never reused: the store is append-only.
    if (await this.store.get(t.templateId, t.version)) {
      throw new HostError(ErrorCode.CONFLICT, `${formatPromptRef(t)} was already stored; use a new version`, {
        ref: formatPromptRef(t),
        reason: 'version_exists',
      });
    }
    let r: 'stored' | 'unchanged';
    try {
      r = await this.store.put(doc, USER_SOURCE);
    } catch (err) {
      const e = toHostError(err);
      if (e.code === ErrorCode.PROMPT_TEMPLATE_INVALID)
        throw new HostError(ErrorCode.VALIDATION_ERROR, e.message, e.details);
      if (e.code === ErrorCode.PROMPT_TEMPLATE_CONFLICT) throw new HostError(ErrorCode.CONFLICT, e.message, e.details);
      throw e;
    }
    if (r === 'unchanged') {
      throw new HostError(ErrorCode.CONFLICT, `${formatPromptRef(t)} was already stored`, {
        ref: formatPromptRef(t),
        reason: 'version_exists',
      });
    }
    return this.get(t.templateId, t.version);
  }

  /**
   * Creates a user template (`createPromptTemplate`). @throws HostError `validation_error`, `forbidden` (the id is a
   * host template), `conflict` (the id exists: update it with `PUT`; or the version was used before a delete).
   */
  async create(body: unknown): Promise<PromptTemplate> {
    const t = this.checkTemplate(body);
    const all = await this.visible(t.templateId);
    if (all.length) {
      this.readOnly(all);
      throw new HostError(ErrorCode.CONFLICT, `prompt template ${t.templateId} exists; PUT a new version`, {
        templateId: t.templateId,
        reason: 'template_exists',
      });
    }
    return this.append(t, isoAt(this.clock.now()));
  }

  /**
   * Appends a new version of a user template (`updatePromptTemplate`); the prior versions stay readable by pin.
   * @throws HostError `validation_error` (body, or templateId other than the path's), `not_found`, `forbidden`,
   * `conflict` (version not above the latest).
   */
  async update(templateId: string, body: unknown): Promise<PromptTemplate> {
    const t = this.checkTemplate(body);
    if (t.templateId !== templateId) {
      throw new HostError(ErrorCode.VALIDATION_ERROR, 'the body templateId differs from the path', {
        errors: [{ path: '/templateId', message: `must be ${templateId}`, keyword: 'const' }],
      });
    }
    const all = await this.visible(templateId);
    const latest = all.at(-1);
    if (!latest) throw notFound(templateId);
    this.readOnly(all);
    if (compareSemver(t.version, latest.template.version) <= 0) {
      throw new HostError(ErrorCode.CONFLICT, `version ${t.version} is not above ${latest.template.version}`, {
        templateId,
        stored: latest.template.version,
        reason: 'version_not_greater',
      });
    }
    const first = (all[0]!.template.meta as { createdAt?: unknown } | undefined)?.createdAt;
    return this.append(t, typeof first === 'string' ? first : all[0]!.storedAt);
  }

  /** Deletes a user template, every version (`deletePromptTemplate`). @throws HostError `not_found`, `forbidden`. */
  async remove(templateId: string): Promise<void> {
    const all = await this.visible(templateId);
    if (!all.length) throw notFound(templateId);
    this.readOnly(all);
    await this.store.remove(templateId);
  }
}
