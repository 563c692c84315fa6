import { openwopSchemas, schemaId } from '../schemas.js';

/** A PromptRef in parsed form (prompt-ref.schema.json, both the stringy and the object form). */
export interface ParsedPromptRef {
  templateId: string;
  version?: string;
  libraryId?: string;
  variableOverrides?: Record<string, unknown>;
}

const STRINGY = /^prompt:([a-z0-9][a-z0-9._-]{0,127})(?:@(.+))?$/;

/** The PromptRef, or the schema issues that make it invalid. */
export function parsePromptRef(ref: unknown): { ok: true; ref: ParsedPromptRef } | { ok: false; errors: unknown[] } {
  const errors = openwopSchemas().check(schemaId('prompt-ref'), ref);
  if (errors.length) return { ok: false, errors };
  if (typeof ref === 'string') {
    const m = STRINGY.exec(ref)!;
    return { ok: true, ref: m[2] ? { templateId: m[1]!, version: m[2] } : { templateId: m[1]! } };
  }
  return { ok: true, ref: ref as ParsedPromptRef };
}

/** The stringy form (`prompt:<id>[@<version>]`); object-form refs are projected to it for events (RFC 0029 §B). */
export function formatPromptRef(ref: { templateId: string; version?: string }): string {
  return ref.version ? `prompt:${ref.templateId}@${ref.version}` : `prompt:${ref.templateId}`;
}

const SEMVER = /^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

function comparePre(a: string | undefined, b: string | undefined): number {
  if (a === b) return 0;
  if (a === undefined) return 1; // a release ranks above its pre-releases
  if (b === undefined) return -1;
  const pa = a.split('.');
  const pb = b.split('.');
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i];
    const y = pb[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    const nx = /^\d+$/.test(x) ? Number(x) : NaN;
    const ny = /^\d+$/.test(y) ? Number(y) : NaN;
    if (!Number.isNaN(nx) && !Number.isNaN(ny)) {
      if (nx !== ny) return nx < ny ? -1 : 1;
    } else if (!Number.isNaN(nx)) return -1;
    else if (!Number.isNaN(ny)) return 1;
    else if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/** SemVer 2.0.0 precedence of two versions the template schema accepted (build metadata ignored). */
export function compareSemver(a: string, b: string): number {
  const ma = SEMVER.exec(a);
  const mb = SEMVER.exec(b);
  if (!ma || !mb) return a < b ? -1 : a > b ? 1 : 0;
  for (let i = 1; i <= 3; i++) {
    const d = Number(ma[i]) - Number(mb[i]);
    if (d) return d < 0 ? -1 : 1;
  }
  return comparePre(ma[4], mb[4]);
}
