import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ErrorCode, HostError, isoAt, jcs, sha256Hex, toHostError } from '../../core/index.js';
import type { Clock } from '../../core/index.js';
import type { Db } from '../../ledger/index.js';
import { openwopSchemas, schemaId } from '../schemas.js';
import type { PromptTemplate } from './prompt-library-surface.js';
import { compareSemver, formatPromptRef } from './prompt-refs.js';
import { ensurePromptTables } from './prompt-store-schema.js';

/** A template file the seed refused, with its stable code (`prompt_template_invalid` / `prompt_template_conflict`). */
export interface RefusedTemplate {
  file: string;
  code: string;
  details: Record<string, unknown>;
}

/** Host cap on `PromptTemplate.text` in UTF-8 bytes (the schema cap; advertised as `prompts.maxTemplateBytes`). */
export const MAX_TEMPLATE_BYTES = 65536;

/** One stored, not deleted, template with its provenance. */
export interface StoredTemplate {
  template: PromptTemplate;
  /** What stored it: `file:<name>` (seeded from a folder) or `user` (`POST`/`PUT /v1/prompts`). */
  source: string;
  storedAt: string;
}

/**
 * The durable prompt library over the shared `Db`: templates are immutable once stored (the table is append-only),
 * so `get(id, version)` always returns the same document (RFC 0144 §promptLibrary).
 */
export class PromptStore {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  init(): Promise<void> {
    return ensurePromptTables(this.db);
  }

  /**
   * Stores a template (validated against prompt-template.schema.json). Storing the same document again is a no-op.
   * @throws HostError `prompt_template_invalid` (schema) or `prompt_template_conflict` (same id@version, other body).
   */
  async put(raw: unknown, source: string): Promise<'stored' | 'unchanged'> {
    const errors = openwopSchemas().check(schemaId('prompt-template'), raw);
    if (errors.length) {
      throw new HostError(ErrorCode.PROMPT_TEMPLATE_INVALID, 'template does not match prompt-template.schema.json', {
        errors,
      });
    }
    const t = raw as PromptTemplate;
    const bytes = Buffer.byteLength(t.text, 'utf8');
    if (bytes > MAX_TEMPLATE_BYTES) {
      throw new HostError(
        ErrorCode.PROMPT_TEMPLATE_INVALID,
        `text is ${bytes} bytes; the cap is ${MAX_TEMPLATE_BYTES}`,
        {
          errors: [
            { path: '/text', message: `must be at most ${MAX_TEMPLATE_BYTES} bytes`, keyword: 'maxTemplateBytes' },
          ],
        },
      );
    }
    const body = jcs(t);
    const digest = `sha256:${sha256Hex(body)}`;
    return this.db.tx(async (tx) => {
      const prior = await tx.get<{ digest: string }>(
        'SELECT digest FROM openwop_prompt_templates WHERE template_id = ? AND version = ?',
        [t.templateId, t.version],
      );
      if (prior) {
        if (prior.digest === digest) return 'unchanged';
        throw new HostError(
          ErrorCode.PROMPT_TEMPLATE_CONFLICT,
          `${formatPromptRef(t)} is already stored with a different body; bump the version`,
          { ref: formatPromptRef(t) },
        );
      }
      await tx.run(
        'INSERT INTO openwop_prompt_templates (template_id, version, kind, template, digest, source, stored_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
        [t.templateId, t.version, t.kind, body, digest, source, isoAt(this.clock.now())],
      );
      return 'stored';
    });
  }

  /** The stored template `templateId@version`, verbatim, or undefined. */
  async get(templateId: string, version: string): Promise<PromptTemplate | undefined> {
    const row = await this.db.get<{ template: string }>(
      'SELECT template FROM openwop_prompt_templates WHERE template_id = ? AND version = ?',
      [templateId, version],
    );
    return row ? (JSON.parse(row.template) as PromptTemplate) : undefined;
  }

  /** Every stored version of `templateId` not deleted, highest SemVer precedence last. */
  async versions(templateId: string): Promise<string[]> {
    const rows = await this.db.all<{ version: string }>(
      `SELECT t.version FROM openwop_prompt_templates t WHERE t.template_id = ? AND NOT EXISTS
        (SELECT 1 FROM openwop_prompt_deletions d WHERE d.template_id = t.template_id AND d.version = t.version)`,
      [templateId],
    );
    return rows.map((r) => r.version).sort(compareSemver);
  }

  /** Every stored template not deleted, by templateId then SemVer precedence. */
  async list(): Promise<StoredTemplate[]> {
    const rows = await this.db.all<{ template: string; source: string; stored_at: string }>(
      `SELECT t.template, t.source, t.stored_at FROM openwop_prompt_templates t WHERE NOT EXISTS
        (SELECT 1 FROM openwop_prompt_deletions d WHERE d.template_id = t.template_id AND d.version = t.version)`,
    );
    return rows
      .map((r) => ({ template: JSON.parse(r.template) as PromptTemplate, source: r.source, storedAt: r.stored_at }))
      .sort(
        (a, b) =>
          (a.template.templateId < b.template.templateId
            ? -1
            : a.template.templateId > b.template.templateId
              ? 1
              : 0) || compareSemver(a.template.version, b.template.version),
      );
  }

  /**
   * Deletes `templateId`: every version not yet deleted gets a tombstone (one transaction). The rows stay, so a
   * pinned `get` still returns them (replay); `versions` and `list` no longer do. Returns the versions deleted.
   */
  async remove(templateId: string): Promise<string[]> {
    return this.db.tx(async (tx) => {
      const rows = await tx.all<{ version: string }>(
        `SELECT t.version FROM openwop_prompt_templates t WHERE t.template_id = ? AND NOT EXISTS
          (SELECT 1 FROM openwop_prompt_deletions d WHERE d.template_id = t.template_id AND d.version = t.version)`,
        [templateId],
      );
      const at = isoAt(this.clock.now());
      for (const r of rows) {
        await tx.run('INSERT INTO openwop_prompt_deletions (template_id, version, deleted_at) VALUES (?, ?, ?)', [
          templateId,
          r.version,
          at,
        ]);
      }
      return rows.map((r) => r.version).sort(compareSemver);
    });
  }

  /** Number of stored templates (all versions). */
  async count(): Promise<number> {
    const row = await this.db.get<{ n: number | string }>('SELECT COUNT(*) AS n FROM openwop_prompt_templates');
    return Number(row?.n ?? 0);
  }

  /**
   * Seeds the library from every `*.json` file in `dir` (sorted). A file that is unreadable, fails the schema or
   * conflicts with a stored version is refused with its code; the others still load.
   */
  async seedDir(dir: string): Promise<{ loaded: string[]; refused: RefusedTemplate[] }> {
    const loaded: string[] = [];
    const refused: RefusedTemplate[] = [];
    let files: string[];
    try {
      files = readdirSync(dir)
        .filter((f) => f.endsWith('.json'))
        .sort();
    } catch (err) {
      throw new HostError(ErrorCode.HOST_CONFIG_INVALID, `cannot read prompt folder ${dir}`, { dir }, { cause: err });
    }
    for (const f of files) {
      const file = join(dir, f);
      let raw: unknown;
      try {
        raw = JSON.parse(readFileSync(file, 'utf8'));
      } catch (err) {
        refused.push({ file, code: ErrorCode.PROMPT_TEMPLATE_INVALID, details: { reason: (err as Error).message } });
        continue;
      }
      try {
        await this.put(raw, `file:${f}`);
        loaded.push(formatPromptRef(raw as PromptTemplate));
      } catch (err) {
        const e = toHostError(err);
        refused.push({ file, code: e.code, details: (e.details ?? {}) as Record<string, unknown> });
      }
    }
    return { loaded, refused };
  }
}
