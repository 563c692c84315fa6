import { ErrorCode, H, sha256Hex } from '../../core/index.js';
import { getPath } from '../expressions.js';
import { NodeFailure } from '../node-registry.js';
import type { PromptTemplate } from './prompt-library-surface.js';

/** Where template variables bind from (RFC 0027 §A `PromptVariable.source`, minus `secret`). */
export interface BindingSources {
  /** The node's resolved input ports (`source: input`, the default). */
  input: Record<string, unknown>;
  /** Run variables (`source: variable`). */
  variable: Record<string, unknown>;
  /** Host context (`source: context`): runId, nodeId, workflowId, workflowName, now. */
  context: Record<string, unknown>;
  /** `PromptRef.variableOverrides`: take precedence over every source (RFC 0029 §A). */
  overrides?: Record<string, unknown>;
  /** The bound values are untrusted: each substituted value is wrapped in `<UNTRUSTED>` markers (RFC 0028 §E). */
  untrusted?: boolean;
}

/** A composed body and what bound into it. */
export interface Composition {
  text: string;
  /** `sha256:<hex>` of the composed body (prompt.composed `hash`). */
  hash: string;
  bindings: Record<string, unknown>;
  /** name → `sha256:<hex>` of the bound value's canonical JSON (prompt.composed `variableHashes`). */
  variableHashes: Record<string, string>;
}

/** The variable sources this host binds (advertised as `prompts.variableSources`). */
export const VARIABLE_SOURCES = ['input', 'variable', 'context'] as const;

const PLACEHOLDER = /\{\{\s*([a-zA-Z_][a-zA-Z0-9_]{0,63})\s*\}\}/g;

function extract(value: unknown, path: string | undefined): unknown {
  if (!path) return value;
  return getPath(value, path.replace(/^\$\.?/, ''));
}

function render(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/**
 * Substitutes `{{name}}` placeholders literally (Mustache-compatible, no logic; RFC 0027 §A). A declared required
 * variable without a binding fails with `prompt_variable_unresolved`; an optional one renders its `defaultValue` or
 * the empty string; an undeclared placeholder is an optional `input` variable.
 */
export function composeTemplate(ref: string, t: PromptTemplate, src: BindingSources): Composition {
  const declared = new Map((t.variables ?? []).map((v) => [v.name, v]));
  const bindings: Record<string, unknown> = {};
  const names = new Set<string>([...declared.keys(), ...[...t.text.matchAll(PLACEHOLDER)].map((m) => m[1]!)]);
  for (const name of names) {
    const decl = declared.get(name);
    let value: unknown;
    if (src.overrides && Object.prototype.hasOwnProperty.call(src.overrides, name)) value = src.overrides[name];
    else {
      const source = decl?.source ?? 'input';
      if (source === 'secret') {
        throw new NodeFailure(
          ErrorCode.PROMPT_VARIABLE_UNRESOLVED,
          `${ref}: secret-sourced variables are not supported`,
          {
            ref,
            variable: name,
            source,
          },
        );
      }
      const root = src[source][name];
      value = extract(root, typeof decl?.extractPath === 'string' ? decl.extractPath : undefined);
    }
    if (value === undefined && decl?.required) {
      throw new NodeFailure(ErrorCode.PROMPT_VARIABLE_UNRESOLVED, `${ref}: required variable ${name} has no binding`, {
        ref,
        variable: name,
      });
    }
    bindings[name] = value === undefined ? (decl?.defaultValue ?? '') : value;
  }
  const text = t.text.replace(PLACEHOLDER, (_m, name: string) =>
    src.untrusted ? `<UNTRUSTED>${render(bindings[name])}</UNTRUSTED>` : render(bindings[name]),
  );
  const variableHashes: Record<string, string> = {};
  for (const [k, v] of Object.entries(bindings)) variableHashes[k] = `sha256:${H(v)}`;
  return { text, hash: `sha256:${sha256Hex(text)}`, bindings, variableHashes };
}
