import type { EdgeCondition, PortValue } from './types.js';

/**
 * Reads a dotted path (`a.b.0.c`) from a value; `undefined` when any step is missing.
 * Paths are data, never code: nothing here evaluates JavaScript.
 */
export function getPath(value: unknown, path: string): unknown {
  if (path === '' || path === '.') return value;
  let cur: unknown = value;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/** What node inputs and expressions can refer to. */
export interface ExpressionScope {
  variables: Record<string, unknown>;
  /** Outputs of completed nodes by node id. */
  nodes: Record<string, Record<string, unknown> | undefined>;
  inputs: Record<string, unknown>;
}

function parseLiteral(text: string): unknown {
  const t = text.trim();
  try {
    return JSON.parse(t) as unknown;
  } catch {
    return t.replace(/^'(.*)'$/, '$1');
  }
}

/**
 * Evaluates the host's expression form: a path (`variables.x`, `nodes.n1.result`, `inputs.y`),
 * optionally negated (`!path`) or compared with a JSON literal (`path == 3`, `path != "a"`).
 */
export function evaluateExpression(expression: string, scope: unknown): unknown {
  const expr = expression.trim().replace(/^\{\{\s*(.*?)\s*\}\}$/, '$1');
  const cmp = /^(.+?)\s*(==|!=)\s*(.+)$/.exec(expr);
  if (cmp) {
    const left = getPath(scope, cmp[1]!.trim());
    const right = parseLiteral(cmp[3]!);
    const eq = JSON.stringify(left) === JSON.stringify(right);
    return cmp[2] === '==' ? eq : !eq;
  }
  if (expr.startsWith('!')) return !truthy(getPath(scope, expr.slice(1).trim()));
  return getPath(scope, expr);
}

function truthy(v: unknown): boolean {
  return Boolean(v);
}

/** Resolves one input port; a missing non-optional connection or variable yields `undefined`. */
export function resolvePort(pv: PortValue, scope: ExpressionScope): unknown {
  switch (pv.type) {
    case 'static':
      return pv.value;
    case 'variable':
      return scope.variables[pv.variableName];
    case 'connection':
      return scope.nodes[pv.nodeId]?.[pv.outputKey];
    case 'expression':
      return evaluateExpression(pv.expression, scope);
  }
}

/** Resolves every input port of a node. */
export function resolveInputs(inputs: Record<string, PortValue>, scope: ExpressionScope): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, pv] of Object.entries(inputs)) out[k] = resolvePort(pv, scope);
  return out;
}

/**
 * Evaluates an edge condition against the source node's result. `left` paths resolve against the
 * source outputs, with `output`/`outputs` (the outputs), `status` and `variables` also available.
 */
export function evaluateCondition(
  cond: EdgeCondition,
  source: { outputs: Record<string, unknown>; status: string },
  variables: Record<string, unknown>,
): boolean {
  const scope = {
    ...source.outputs,
    output: source.outputs,
    outputs: source.outputs,
    status: source.status,
    variables,
  };
  const type = cond.type ?? (cond.expression ? 'expression' : 'truthy');
  if (type === 'expression') return truthy(evaluateExpression(cond.expression ?? '', scope));
  const left = getPath(scope, cond.left ?? '');
  switch (type) {
    case 'equals':
      return JSON.stringify(left) === JSON.stringify(cond.right);
    case 'notEquals':
      return JSON.stringify(left) !== JSON.stringify(cond.right);
    case 'contains':
      if (typeof left === 'string') return typeof cond.right === 'string' && left.includes(cond.right);
      if (Array.isArray(left)) return left.some((x) => JSON.stringify(x) === JSON.stringify(cond.right));
      return false;
    case 'regex':
      try {
        return typeof left === 'string' && new RegExp(String(cond.right)).test(left);
      } catch {
        return false;
      }
    case 'truthy':
      return truthy(left);
    case 'falsy':
      return !truthy(left);
  }
  return false;
}
