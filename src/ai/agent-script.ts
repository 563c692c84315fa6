/**
 * Agent scripts for the scripted provider: a JSON list of turns, each tool calls with arguments or a final
 * message. Arguments may refer to earlier tool results with `{"$ref": "result[0].receipt.state_hash"}` and the
 * final message with `{{result[-1].receipt.status}}` (results counted in call order; negative from the end).
 * Validated with ajv; a bad script is `MHS.HOST.AGENT_SCRIPT_INVALID`, never a crash.
 */
import { readFileSync } from 'node:fs';
import Ajv2020Module from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import { ErrorCode, HostError } from '../core/index.js';

/** One scripted tool call. */
export interface ScriptToolCall {
  tool: string;
  id?: string;
  arguments?: Record<string, unknown>;
}

/** Token counts a turn declares (reported verbatim as the call's usage, e.g. OpenWOP `provider.usage`). */
export interface ScriptUsage {
  inputTokens: number;
  outputTokens: number;
}

/** One scripted turn. */
export type ScriptTurn =
  { tool_calls: ScriptToolCall[]; text?: string; usage?: ScriptUsage } | { final: string; usage?: ScriptUsage };

/** An agent script. */
export interface AgentScript {
  name?: string;
  /** The model id the provider reports (default `scripted`). */
  model?: string;
  /** The user message the run starts with. */
  prompt?: string;
  /** Connector or endpoint ids the CLI connects when no `--endpoint` is given. */
  endpoints?: string[];
  max_turns?: number;
  turns: ScriptTurn[];
}

const Ajv2020 = ((Ajv2020Module as unknown as { default?: unknown }).default ?? Ajv2020Module) as new (
  opts: Record<string, unknown>,
) => { compile(schema: object): ValidateFunction };

const USAGE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['inputTokens', 'outputTokens'],
  properties: {
    inputTokens: { type: 'integer', minimum: 0 },
    outputTokens: { type: 'integer', minimum: 0 },
  },
} as const;

/** JSON Schema (2020-12) of an agent script. */
export const AGENT_SCRIPT_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  additionalProperties: false,
  required: ['turns'],
  properties: {
    name: { type: 'string' },
    model: { type: 'string', minLength: 1 },
    prompt: { type: 'string' },
    endpoints: { type: 'array', items: { type: 'string', minLength: 1 } },
    max_turns: { type: 'integer', minimum: 1, maximum: 1000 },
    turns: {
      type: 'array',
      minItems: 1,
      items: {
        oneOf: [
          {
            type: 'object',
            additionalProperties: false,
            required: ['tool_calls'],
            properties: {
              text: { type: 'string' },
              usage: USAGE_SCHEMA,
              tool_calls: {
                type: 'array',
                minItems: 1,
                items: {
                  type: 'object',
                  additionalProperties: false,
                  required: ['tool'],
                  properties: {
                    tool: { type: 'string', minLength: 1 },
                    id: { type: 'string', minLength: 1 },
                    arguments: { type: 'object' },
                  },
                },
              },
            },
          },
          {
            type: 'object',
            additionalProperties: false,
            required: ['final'],
            properties: { final: { type: 'string' }, usage: USAGE_SCHEMA },
          },
        ],
      },
    },
  },
} as const;

let validator: ValidateFunction | undefined;
const REF = /^result\[(-?\d+)\]((?:\.[A-Za-z_$][\w$-]*|\[\d+\])*)$/;
const TEMPLATE = /\{\{\s*([^}]*?)\s*\}\}/g;

function invalid(message: string, details: Record<string, unknown>): HostError {
  return new HostError(ErrorCode.HOST_AGENT_SCRIPT_INVALID, message, details, {
    remediation: 'Fix the agent script (see docs/agent.md for its format).',
  });
}

/** `{"$ref": "..."}` exactly, or null. */
function refOf(v: unknown): string | null {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return null;
  const keys = Object.keys(v);
  return keys.length === 1 && keys[0] === '$ref' ? String((v as { $ref: unknown }).$ref) : null;
}

function checkRefs(v: unknown, at: string, issues: Array<{ path: string; message: string }>): void {
  const ref = refOf(v);
  if (ref !== null) {
    if (!REF.test(ref)) issues.push({ path: at, message: `bad $ref ${JSON.stringify(ref)}` });
    return;
  }
  if (v && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) {
      if (k === '$ref') issues.push({ path: `${at}/$ref`, message: '$ref must be the only key of its object' });
      checkRefs(x, `${at}/${k}`, issues);
    }
}

/**
 * Validates a parsed script (schema, `$ref` and `{{...}}` syntax).
 * @throws HostError `MHS.HOST.AGENT_SCRIPT_INVALID` with `details.issues`.
 */
export function parseAgentScript(raw: unknown, source = '(inline)'): AgentScript {
  validator ??= new Ajv2020({ allErrors: true, strict: false }).compile(AGENT_SCRIPT_SCHEMA);
  if (!validator(raw)) {
    const issues = (validator.errors ?? []).map((e) => ({ path: e.instancePath || '/', message: e.message ?? '' }));
    throw invalid(`agent script ${source} does not match its schema`, { file: source, issues });
  }
  const script = raw as AgentScript;
  const issues: Array<{ path: string; message: string }> = [];
  script.turns.forEach((t, i) => {
    if ('final' in t) {
      for (const m of t.final.matchAll(TEMPLATE))
        if (!REF.test(m[1] ?? '')) issues.push({ path: `/turns/${i}/final`, message: `bad reference {{${m[1]}}}` });
    } else
      t.tool_calls.forEach((c, j) => checkRefs(c.arguments ?? {}, `/turns/${i}/tool_calls/${j}/arguments`, issues));
  });
  if (issues.length) throw invalid(`agent script ${source} has bad references`, { file: source, issues });
  return script;
}

/** Reads and validates a script file. @throws HostError `MHS.HOST.AGENT_SCRIPT_INVALID`. */
export function loadAgentScript(file: string): AgentScript {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw invalid(`cannot read agent script ${file}: ${(err as Error).message}`, { file, issues: [] });
  }
  return parseAgentScript(raw, file);
}

/** Resolves one reference against the tool results so far. @throws `MHS.HOST.AGENT_SCRIPT_INVALID`. */
export function resolveRef(ref: string, results: readonly unknown[]): unknown {
  const m = REF.exec(ref);
  if (!m) throw invalid(`bad reference ${ref}`, { ref });
  const n = Number(m[1]);
  const idx = n < 0 ? results.length + n : n;
  if (idx < 0 || idx >= results.length)
    throw invalid(`reference ${ref}: there are ${results.length} results`, { ref, results: results.length });
  let v: unknown = results[idx];
  for (const seg of (m[2] ?? '').match(/\.[^.[]+|\[\d+\]/g) ?? []) {
    const key = seg.startsWith('.') ? seg.slice(1) : Number(seg.slice(1, -1));
    if (v === null || typeof v !== 'object' || !(key in (v as object)))
      throw invalid(`reference ${ref}: no ${String(key)} in the result`, { ref, missing: String(key) });
    v = (v as Record<string | number, unknown>)[key];
  }
  return v;
}

/** A copy of `v` with every `{"$ref"}` replaced by the value it names. */
export function resolveRefs(v: unknown, results: readonly unknown[]): unknown {
  const ref = refOf(v);
  if (ref !== null) return resolveRef(ref, results);
  if (Array.isArray(v)) return v.map((x) => resolveRefs(x, results));
  if (v && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolveRefs(x, results)]));
  return v;
}

/** The final text with every `{{ref}}` replaced (objects as JSON). */
export function fillTemplate(text: string, results: readonly unknown[]): string {
  return text.replace(TEMPLATE, (_m, ref: string) => {
    const v = resolveRef(ref, results);
    return typeof v === 'string' ? v : JSON.stringify(v);
  });
}
