import { existsSync, readFileSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { TextDecoder } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { ErrorCode, H } from '../../core/index.js';
import { openwopSchemas, schemaId } from '../schemas.js';
import { formatPromptRef, parsePromptRef } from '../services/prompt-refs.js';

/** An agent of an installed pack, with its refs resolved and pinned at install (RFC 0003 §C/§D). */
export interface ResolvedAgent {
  /** The AgentManifest exactly as the pack declares it (agent-manifest.schema.json). */
  manifest: Record<string, unknown> & { agentId: string; persona: string; modelClass: string };
  /** The system prompt body: inline `systemPrompt`, the pack file, or the pinned prompt-library template text. */
  systemPrompt: string;
  /** Where the prompt came from: `inline`, `file:<path>` or the pinned `prompt:<id>@<version>`. */
  systemPromptSource: string;
  /** sha256 of the prompt body (what events may show instead of the body). */
  systemPromptDigest: string;
  taskSchema?: object;
  returnSchema?: object;
}

/** A pack ready to install: its manifest and resolved agents, with the digest that identifies the content. */
export interface ResolvedPack {
  name: string;
  version: string;
  digest: string;
  manifest: Record<string, unknown>;
  agents: ResolvedAgent[];
}

/** A pack refused at install, with its stable code. */
export interface RefusedPack {
  /** Folder (or pack name once known). */
  pack: string;
  code: string;
  details: Record<string, unknown>;
}

/** Looks up a prompt-library template by id and version (the `PromptStore` shape). */
export interface PromptLookup {
  get(templateId: string, version: string): Promise<{ text: string } | undefined>;
  versions(templateId: string): Promise<string[]>;
}

class Refusal extends Error {
  constructor(
    readonly code: string,
    readonly details: Record<string, unknown>,
  ) {
    super(code);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A pack-relative file (RFC 0003 §C): no absolute path, no escape from the pack root (also through symlinks), UTF-8. */
function packFile(root: string, ref: string): string | undefined {
  if (isAbsolute(ref) || ref.split(/[\\/]/).includes('..')) return undefined;
  const p = resolve(root, ref);
  if (!existsSync(p) || !statSync(p).isFile()) return undefined;
  const rel = relative(realpathSync(root), realpathSync(p));
  if (rel.startsWith('..') || isAbsolute(rel) || rel.split(sep).includes('..')) return undefined;
  try {
    return utf8.decode(readFileSync(p));
  } catch {
    return undefined;
  }
}

async function resolvePrompt(
  root: string,
  m: ResolvedAgent['manifest'],
  prompts: PromptLookup | undefined,
): Promise<Pick<ResolvedAgent, 'systemPrompt' | 'systemPromptSource'>> {
  if (typeof m.systemPrompt === 'string') return { systemPrompt: m.systemPrompt, systemPromptSource: 'inline' };
  const ref = m.systemPromptRef as string;
  const refuse = (cause: string): Refusal =>
    new Refusal(ErrorCode.AGENT_PROMPT_UNRESOLVED, { agentId: m.agentId, ref, cause });
  if (ref.startsWith('prompt:')) {
    // A host prompt-library ref: pinned at install (an unpinned ref pins the latest version, RFC 0029 §B).
    const parsed = parsePromptRef(ref);
    if (!parsed.ok) throw refuse(ErrorCode.PROMPT_REF_INVALID);
    if (!prompts) throw refuse(ErrorCode.PROMPT_NOT_FOUND);
    const id = parsed.ref.templateId;
    const version = parsed.ref.version ?? (await prompts.versions(id)).at(-1);
    const t = version ? await prompts.get(id, version) : undefined;
    if (!t) throw refuse(parsed.ref.version ? ErrorCode.PROMPT_VERSION_PINNED : ErrorCode.PROMPT_NOT_FOUND);
    return { systemPrompt: t.text, systemPromptSource: formatPromptRef({ templateId: id, version: version! }) };
  }
  const body = packFile(root, ref);
  if (body === undefined) throw refuse('file_unresolved');
  return { systemPrompt: body, systemPromptSource: `file:${ref}` };
}

function handoffSchema(root: string, agentId: string, ref: string): object {
  const bad = (cause: string): Refusal => new Refusal(ErrorCode.AGENT_HANDOFF_SCHEMA_INVALID, { agentId, ref, cause });
  const body = packFile(root, ref);
  if (body === undefined) throw bad('file_unresolved');
  let schema: unknown;
  try {
    schema = JSON.parse(body);
  } catch {
    throw bad('not_json');
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) throw bad('not_a_schema');
  try {
    new Ajv2020({ strict: false }).compile(schema as object);
  } catch (err) {
    throw new Refusal(ErrorCode.AGENT_HANDOFF_SCHEMA_INVALID, {
      agentId,
      ref,
      cause: 'not_a_schema',
      error: err instanceof Error ? err.message : String(err),
    });
  }
  return schema as object;
}

/** Pack `peerDependencies` the manifest runtime floor meets (with `ctx.agentRuntime` installed alongside). */
export const MET_BY_FLOOR: ReadonlySet<string> = new Set([
  'agents.manifestRuntime',
  'agents.dispatch',
  'agents.orchestrator',
  'host.agentRuntime',
]);

/**
 * Validates and resolves one pack folder (`<root>/pack.json`, RFC 0003): pack.json against
 * node-pack-manifest.schema.json (each `agents[]` entry against agent-manifest.schema.json), every agentId in the
 * pack's namespace (§B), `systemPromptRef` resolved (§C: a pack file, or a `prompt:` ref pinned through the prompt
 * library) and `handoff.*SchemaRef` loaded and compiled (§D). A `peerDependencies` key outside `met`, or an agent
 * with `memoryShape.longTerm` (no memory backends here), is refused `unsupported_capability` (RFC 0070 §D).
 */
export async function resolvePack(
  root: string,
  prompts?: PromptLookup,
  met: ReadonlySet<string> = MET_BY_FLOOR,
): Promise<{ ok: true; pack: ResolvedPack } | { ok: false; refused: RefusedPack }> {
  let label = root;
  try {
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(join(root, 'pack.json'), 'utf8'));
    } catch (err) {
      throw new Refusal(ErrorCode.AGENT_PACK_INVALID, { cause: err instanceof Error ? err.message : String(err) });
    }
    const errors = openwopSchemas().check(schemaId('node-pack-manifest'), raw);
    if (errors.length) throw new Refusal(ErrorCode.AGENT_PACK_INVALID, { errors });
    const manifest = raw as {
      name: string;
      version: string;
      agents?: Array<ResolvedAgent['manifest']>;
      peerDependencies?: Record<string, string>;
    };
    label = manifest.name;
    // RFC 0070 §D: a tier this host does not meet is refused, never silently accepted (RFC 0003 §E).
    for (const dep of Object.keys(manifest.peerDependencies ?? {})) {
      if (!met.has(dep)) throw new Refusal(ErrorCode.UNSUPPORTED_CAPABILITY, { requiredCapability: dep });
    }
    const agents: ResolvedAgent[] = [];
    for (const m of manifest.agents ?? []) {
      if (!m.agentId.startsWith(`${manifest.name}.`) || m.agentId.slice(manifest.name.length + 1).includes('.'))
        throw new Refusal(ErrorCode.AGENT_PACK_NAMESPACE, { agentId: m.agentId });
      if ((m.memoryShape as { longTerm?: unknown } | undefined)?.longTerm === true)
        throw new Refusal(ErrorCode.UNSUPPORTED_CAPABILITY, {
          agentId: m.agentId,
          requiredCapability: 'agents.memoryBackends',
        });
      const prompt = await resolvePrompt(root, m, prompts);
      const h = (m.handoff ?? {}) as { taskSchemaRef?: string; returnSchemaRef?: string };
      agents.push({
        manifest: m,
        ...prompt,
        systemPromptDigest: H(prompt.systemPrompt),
        ...(h.taskSchemaRef ? { taskSchema: handoffSchema(root, m.agentId, h.taskSchemaRef) } : {}),
        ...(h.returnSchemaRef ? { returnSchema: handoffSchema(root, m.agentId, h.returnSchemaRef) } : {}),
      });
    }
    const ids = new Set(agents.map((a) => a.manifest.agentId));
    if (ids.size !== agents.length) throw new Refusal(ErrorCode.AGENT_PACK_INVALID, { cause: 'duplicate agentId' });
    const pack = { name: manifest.name, version: manifest.version, manifest: raw as Record<string, unknown>, agents };
    return { ok: true, pack: { ...pack, digest: H(pack) } };
  } catch (err) {
    if (!(err instanceof Refusal)) throw err;
    return { ok: false, refused: { pack: label, code: err.code, details: err.details } };
  }
}

/** The pack folders of `dir`: each sub-folder holding a `pack.json` (sorted; a missing `dir` has none). */
export function packFolders(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return [];
  }
  return names.map((n) => join(dir, n)).filter((p) => statSync(p).isDirectory() && existsSync(join(p, 'pack.json')));
}
