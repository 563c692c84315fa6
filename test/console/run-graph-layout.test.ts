// Guarantees (issue 18 item 2): the run graph's layered layout puts every edge's target below its source, keeps an
// edge that loops back (a cycle or a self edge) as a back edge instead of failing or stacking layers forever, leaves
// out edges naming a node the run does not have, and places no two nodes on each other.
import { describe, expect, it } from 'vitest';
import { layoutGraph, NODE_W } from '../../src/console/ui/run-graph-layout.js';

const n = (...ids: string[]) => ids.map((id) => ({ id }));
const e = (s: string, t: string) => ({ id: `${s}-${t}`, sourceNodeId: s, targetNodeId: t });

describe('run graph layout', () => {
  it('layers a diamond by the longest path, targets below sources, nobody overlapping', () => {
    const g = layoutGraph(n('a', 'b', 'c', 'd', 'e'), [
      e('a', 'b'),
      e('a', 'c'),
      e('b', 'd'),
      e('c', 'd'),
      e('a', 'e'),
      e('e', 'd'),
    ]);
    const at = new Map(g.nodes.map((x) => [x.id, x]));
    for (const x of g.edges) expect(at.get(x.targetNodeId)!.y).toBeGreaterThan(at.get(x.sourceNodeId)!.y);
    expect(g.edges.every((x) => !x.back)).toBe(true);
    const row = g.nodes.filter((x) => x.layer === 1).sort((p, q) => p.x - q.x);
    expect(row.map((x) => x.id).sort()).toEqual(['b', 'c', 'e']);
    for (let i = 1; i < row.length; i++) expect(row[i]!.x - row[i - 1]!.x).toBeGreaterThanOrEqual(NODE_W);
    for (const x of g.nodes) expect(x.x + NODE_W).toBeLessThanOrEqual(g.width);
  });

  it('a loop and a self edge are back edges; an edge to an unknown node is left out', () => {
    const g = layoutGraph(n('a', 'b', 'c'), [e('a', 'b'), e('b', 'c'), e('c', 'a'), e('b', 'b'), e('c', 'zz')]);
    expect(g.edges.map((x) => [x.id, x.back])).toEqual([
      ['a-b', false],
      ['b-c', false],
      ['c-a', true],
      ['b-b', true],
    ]);
    expect(g.nodes.map((x) => [x.id, x.layer])).toEqual([
      ['a', 0],
      ['b', 1],
      ['c', 2],
    ]);
  });

  it('a cycle with no start node still lays out every node', () => {
    const g = layoutGraph(n('x', 'y'), [e('x', 'y'), e('y', 'x')]);
    expect(g.nodes.map((x) => x.layer).sort()).toEqual([0, 1]);
    expect(g.edges.filter((x) => x.back)).toHaveLength(1);
  });
});
