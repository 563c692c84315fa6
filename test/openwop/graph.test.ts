// Guarantees (issue 7 §2): the scheduling decisions follow workflow-definition.schema.json's edge
// semantics — trigger rules (all_success, any_success, all_complete, none_failed, any_failed), edge
// conditions, skip propagation, routed failures, and loops re-entering a node only from downstream.
// Pure decisions: no store, no timers.
import { describe, expect, it } from 'vitest';
import { evaluateCondition, evaluateExpression } from '../../src/openwop/expressions.js';
import { Graph } from '../../src/openwop/graph.js';
import type { TriggerRule, WorkflowDefinition, WorkflowEdge } from '../../src/openwop/types.js';

function graph(nodes: string[], edges: Array<Partial<WorkflowEdge> & { s: string; t: string }>): Graph {
  const def: WorkflowDefinition = {
    id: 'g',
    name: 'g',
    version: '1',
    nodes: nodes.map((id) => ({ id, typeId: 'core.noop', name: id, position: { x: 0, y: 0 }, config: {}, inputs: {} })),
    edges: edges.map(({ s, t, ...rest }, i) => ({ id: `e${i}`, sourceNodeId: s, targetNodeId: t, ...rest })),
    triggers: [],
    variables: [],
    metadata: {},
    settings: {},
  };
  return new Graph(def);
}

function join(rule: TriggerRule, a: 'completed' | 'failed' | 'skip', b: 'completed' | 'failed' | 'skip') {
  const g = graph(
    ['a', 'b', 'c'],
    [
      { s: 'a', t: 'c', triggerRule: rule },
      { s: 'b', t: 'c', triggerRule: rule },
    ],
  );
  const s = g.initialState();
  for (const [id, st] of [
    ['a', a],
    ['b', b],
  ] as const) {
    if (st === 'skip') g.markSkipped(s, id);
    else {
      g.markStarted(s, id);
      g.markTerminal(s, id, st);
    }
  }
  return g.decide('c', s, {});
}

describe('trigger rules on a join', () => {
  it.each([
    ['all_success', 'completed', 'completed', 'start'],
    ['all_success', 'completed', 'failed', 'skip'],
    ['any_success', 'failed', 'completed', 'start'],
    ['any_success', 'failed', 'failed', 'skip'],
    ['all_complete', 'completed', 'failed', 'start'],
    ['all_complete', 'skip', 'completed', 'start'],
    ['none_failed', 'skip', 'completed', 'start'],
    ['none_failed', 'failed', 'completed', 'skip'],
    ['any_failed', 'completed', 'failed', 'start'],
    ['any_failed', 'completed', 'completed', 'skip'],
  ] as const)('%s with sources %s/%s → %s', (rule, a, b, want) => {
    expect(join(rule, a, b)).toBe(want);
  });

  it('all_success waits until every source finished', () => {
    const g = graph(
      ['a', 'b', 'c'],
      [
        { s: 'a', t: 'c' },
        { s: 'b', t: 'c' },
      ],
    );
    const s = g.initialState();
    g.markStarted(s, 'a');
    g.markTerminal(s, 'a', 'completed');
    expect(g.decide('c', s, {})).toBe('wait');
  });
});

describe('conditions, failures and loops', () => {
  it('an edge condition on the source outputs decides the branch', () => {
    const g = graph(
      ['a', 'yes', 'no'],
      [
        { s: 'a', t: 'yes', condition: { type: 'equals', left: 'output.n', right: 3 } },
        { s: 'a', t: 'no', condition: { type: 'notEquals', left: 'n', right: 3 } },
      ],
    );
    const s = g.initialState();
    g.markStarted(s, 'a');
    g.markTerminal(s, 'a', 'completed', { n: 3 });
    expect([g.decide('yes', s, {}), g.decide('no', s, {})]).toEqual(['start', 'skip']);
  });

  it('a failure routed by any_failed or all_complete is handled; an unrouted one is not', () => {
    const g = graph(
      ['a', 'b', 'c'],
      [
        { s: 'a', t: 'b', triggerRule: 'any_failed' },
        { s: 'b', t: 'c' },
      ],
    );
    expect(g.failureHandled('a')).toBe(true);
    expect(g.failureHandled('b')).toBe(false);
  });

  it('a loop re-enters a node from downstream, never again from upstream', () => {
    const g = graph(
      ['start', 'gate', 'revise'],
      [
        { s: 'start', t: 'gate', triggerRule: 'any_success' },
        { s: 'gate', t: 'revise', triggerRule: 'any_failed' },
        { s: 'revise', t: 'gate', triggerRule: 'any_success' },
      ],
    );
    const s = g.initialState();
    expect(g.decide('start', s, {})).toBe('start');
    g.markStarted(s, 'start');
    g.markTerminal(s, 'start', 'completed');
    expect(g.decide('gate', s, {})).toBe('start');
    g.markStarted(s, 'gate');
    g.markTerminal(s, 'gate', 'failed');
    expect(g.decide('revise', s, {})).toBe('start');
    g.markStarted(s, 'revise');
    g.markTerminal(s, 'revise', 'completed');
    expect(g.decide('gate', s, {})).toBe('start');
    g.markStarted(s, 'gate');
    g.markTerminal(s, 'gate', 'completed');
    expect(g.decide('revise', s, {})).toBe('wait');
    expect(s.nodes.gate!.activations).toBe(2);
  });

  it('expressions are paths and literals, never code', () => {
    const scope = { variables: { a: 2, s: 'x' } };
    expect(evaluateExpression('variables.a == 2', scope)).toBe(true);
    expect(evaluateExpression('variables.s != "x"', scope)).toBe(false);
    expect(evaluateExpression('!variables.missing', scope)).toBe(true);
    expect(evaluateExpression('process.exit(1)', scope)).toBeUndefined();
    expect(
      evaluateCondition(
        { type: 'regex', left: 'id', right: '^a' },
        { outputs: { id: 'abc' }, status: 'completed' },
        {},
      ),
    ).toBe(true);
    expect(evaluateCondition({ type: 'falsy', left: 'nope' }, { outputs: {}, status: 'completed' }, {})).toBe(true);
  });
});
