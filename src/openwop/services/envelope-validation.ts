import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import { ErrorCode, HostError } from '../../core/index.js';
import { openwopSchemas, schemaId } from '../schemas.js';
import type { SchemaIssue } from '../schemas.js';

/** The four kinds every engine recognises and, once any kind is advertised, lists (ai-envelope.md, RFC 0094). */
export const UNIVERSAL_ENVELOPES = ['clarification.request', 'schema.request', 'schema.response', 'error'] as const;

/**
 * The envelope catalog of this host: the universal kinds (payload schemas vendored under `schemas/envelopes/`) plus
 * host-configured kinds with their payload JSON Schemas. Validates whole envelopes (ai-envelope.schema.json) and
 * their payloads (per kind).
 */
export class EnvelopeCatalog {
  private readonly custom = new Map<string, ValidateFunction>();
  private readonly schemas = new Map<string, object>();

  /** @throws HostError `MHS.HOST.CONFIG_INVALID` for a kind that shadows a universal one or a schema that does not compile. */
  constructor(kinds: Record<string, object> = {}) {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    for (const [kind, schema] of Object.entries(kinds)) {
      if ((UNIVERSAL_ENVELOPES as readonly string[]).includes(kind) || !kind) {
        throw new HostError(ErrorCode.HOST_CONFIG_INVALID, `envelope kind ${kind} cannot be configured`, { kind });
      }
      try {
        this.custom.set(kind, ajv.compile(schema));
      } catch (err) {
        throw new HostError(
          ErrorCode.HOST_CONFIG_INVALID,
          `payload schema of ${kind} does not compile`,
          { kind },
          { cause: err },
        );
      }
      this.schemas.set(kind, schema);
    }
  }

  /** `supportedEnvelopes`: the universal four, then the configured kinds. */
  kinds(): string[] {
    return [...UNIVERSAL_ENVELOPES, ...this.custom.keys()];
  }

  has(kind: string): boolean {
    return this.kinds().includes(kind);
  }

  /** The payload JSON Schema of a kind (what a `schema.request` is answered with). */
  payloadSchema(kind: string): object | undefined {
    if (this.schemas.has(kind)) return this.schemas.get(kind);
    if ((UNIVERSAL_ENVELOPES as readonly string[]).includes(kind)) return { $ref: schemaId(`envelopes/${kind}`) };
    return undefined;
  }

  /** Issues of a complete envelope: its top-level shape, then its payload against the kind's schema. */
  check(envelope: Record<string, unknown>): SchemaIssue[] {
    const issues = openwopSchemas().check(schemaId('ai-envelope'), envelope);
    if (issues.length) return issues;
    const kind = String(envelope.type);
    if ((UNIVERSAL_ENVELOPES as readonly string[]).includes(kind)) {
      return openwopSchemas()
        .check(schemaId(`envelopes/${kind}`), envelope.payload)
        .map((i) => ({ ...i, path: `/payload${i.path === '/' ? '' : i.path}` }));
    }
    const v = this.custom.get(kind);
    if (!v) return [{ path: '/type', message: `kind ${kind} is not in supportedEnvelopes`, keyword: 'enum' }];
    if (v(envelope.payload)) return [];
    return (v.errors ?? []).map((e) => ({
      path: `/payload${e.instancePath}`,
      message: e.message ?? 'invalid',
      keyword: e.keyword,
    }));
  }
}
