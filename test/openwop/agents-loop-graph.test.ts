// Guarantees (RFC 0037 loop on the static DAG, CP-2): a cycle that nothing else enters (supervisor ⇄ dispatch)
// starts at its first node in definition order and only there; a cycle entered from outside has no such entry;
// a node that completes with exitLoop stops its edges back into its own cycle while its forward edges still
// fire; the next activation clears the mark. Pure scheduling decisions: no store, no timers.
import { describe, expect, it } from 'vitest';
import { Graph } from '../../src/openwop/graph.js';
import type { WorkflowDefinition } from '../../src/openwop/types.js';

function graph(nodes: string[], edges: Array<[string, string]>): Graph {
  const def: WorkflowDefinition = {
    id: 'g',
    name: 'g',
    version: '1',
    nodes: nodes.map((id) => ({ id, typeId: 'core.noop', name: id, position: { x: 0, y: 0 }, config: {}, inputs: {} })),
    edges: edges.map(([s, t], i) => ({ id: `e${i}`, sourceNodeId: s, targetNodeId: t })),
    triggers: [],
    variables: [],
    metadata: {},
    settings: {},
  };
  return new Graph(def);
}

describe('supervisor loop scheduling', () => {
  it('a closed cycle starts at its first node only', () => {
    const g = graph(
      ['supervisor', 'dispatch'],
      [
        ['supervisor', 'dispatch'],
        ['dispatch', 'supervisor'],
      ],
    );
    expect([...g.loopEntries()]).toEqual(['supervisor']);
    const s = g.initialState();
    expect(g.decide('supervisor', s, {})).toBe('start');
    expect(g.decide('dispatch', s, {})).toBe('wait');
    g.markStarted(s, 'supervisor');
    g.markTerminal(s, 'supervisor', 'completed', {});
    expect(g.decide('dispatch', s, {})).toBe('start');
    expect(g.decide('supervisor', s, {})).toBe('wait');
    g.markStarted(s, 'dispatch');
    g.markTerminal(s, 'dispatch', 'completed', {});
    expect(g.decide('supervisor', s, {})).toBe('start');
  });

  it('a cycle entered from a start node has no loop entry', () => {
    const g = graph(
      ['start', 'a', 'b'],
      [
        ['start', 'a'],
        ['a', 'b'],
        ['b', 'a'],
      ],
    );
    expect([...g.loopEntries()]).toEqual([]);
    expect(g.decide('a', g.initialState(), {})).toBe('wait');
  });

  it('exitLoop stops the back edge, keeps the forward edge, and is cleared by the next activation', () => {
    const g = graph(
      ['supervisor', 'dispatch', 'report'],
      [
        ['supervisor', 'dispatch'],
        ['dispatch', 'supervisor'],
        ['dispatch', 'report'],
      ],
    );
    const s = g.initialState();
    g.markStarted(s, 'supervisor');
    g.markTerminal(s, 'supervisor', 'completed', {});
    g.markStarted(s, 'dispatch');
    g.markTerminal(s, 'dispatch', 'completed', {});
    g.markLoopExit(s, 'dispatch');
    expect(g.decide('supervisor', s, {})).toBe('wait');
    expect(g.decide('report', s, {})).toBe('start');
    g.markStarted(s, 'dispatch');
    expect(s.nodes.dispatch!.exitLoop).toBeUndefined();
  });
});
