// A layered layout of a workflow definition's nodes from its edges (issue 18 item 2), pure: layers top to bottom by
// the longest path from a start node, edges that close a loop drawn as back edges, each layer ordered by where its
// predecessors stand (one barycentre pass), ties in definition order.

export interface GraphNode {
  id: string;
  name?: string;
  typeId?: string;
}

export interface GraphEdge {
  id: string;
  sourceNodeId: string;
  targetNodeId: string;
}

export interface PlacedNode extends GraphNode {
  x: number;
  y: number;
  layer: number;
}

export interface PlacedEdge extends GraphEdge {
  /** The edge closes a cycle (a loop back to an earlier layer). */
  back: boolean;
}

export interface Layout {
  nodes: PlacedNode[];
  edges: PlacedEdge[];
  width: number;
  height: number;
}

export const NODE_W = 170;
export const NODE_H = 50;
const GAP_X = 30;
const GAP_Y = 46;
const PAD = 12;

/** Edges whose DFS from the start nodes (no incoming edge, else the first node) reaches a node still on the path. */
function backEdges(nodes: GraphNode[], edges: GraphEdge[]): Set<string> {
  const out = new Map<string, GraphEdge[]>(nodes.map((n) => [n.id, []]));
  for (const e of edges) out.get(e.sourceNodeId)?.push(e);
  const hasIn = new Set(edges.map((e) => e.targetNodeId));
  const starts = nodes.filter((n) => !hasIn.has(n.id));
  const state = new Map<string, 'open' | 'done'>();
  const back = new Set<string>();
  const visit = (id: string) => {
    state.set(id, 'open');
    for (const e of out.get(id) ?? []) {
      const s = state.get(e.targetNodeId);
      if (s === 'open') back.add(e.id);
      else if (!s) visit(e.targetNodeId);
    }
    state.set(id, 'done');
  };
  for (const n of [...starts, ...nodes]) if (!state.has(n.id)) visit(n.id);
  return back;
}

/** Places `nodes` in layers from `edges` (edges naming an unknown node are left out). */
export function layoutGraph(nodes: GraphNode[], allEdges: GraphEdge[]): Layout {
  const known = new Set(nodes.map((n) => n.id));
  const edges = allEdges.filter((e) => known.has(e.sourceNodeId) && known.has(e.targetNodeId));
  const back = backEdges(nodes, edges);
  const forward = edges.filter((e) => !back.has(e.id) && e.sourceNodeId !== e.targetNodeId);
  // Longest path over the forward edges (a DAG): Kahn's order, each node one below its lowest predecessor.
  const layer = new Map<string, number>(nodes.map((n) => [n.id, 0]));
  const indeg = new Map<string, number>(nodes.map((n) => [n.id, 0]));
  for (const e of forward) indeg.set(e.targetNodeId, indeg.get(e.targetNodeId)! + 1);
  const queue = nodes.filter((n) => indeg.get(n.id) === 0).map((n) => n.id);
  while (queue.length) {
    const id = queue.shift()!;
    for (const e of forward) {
      if (e.sourceNodeId !== id) continue;
      layer.set(e.targetNodeId, Math.max(layer.get(e.targetNodeId)!, layer.get(id)! + 1));
      indeg.set(e.targetNodeId, indeg.get(e.targetNodeId)! - 1);
      if (indeg.get(e.targetNodeId) === 0) queue.push(e.targetNodeId);
    }
  }
  const depth = Math.max(0, ...layer.values()) + 1;
  const rows: GraphNode[][] = Array.from({ length: depth }, () => []);
  nodes.forEach((n) => rows[layer.get(n.id)!]!.push(n));
  const slot = new Map<string, number>();
  const order = new Map(nodes.map((n, i) => [n.id, i]));
  for (const row of rows) {
    const bary = (n: GraphNode) => {
      const preds = forward.filter((e) => e.targetNodeId === n.id && slot.has(e.sourceNodeId));
      return preds.length ? preds.reduce((s, e) => s + slot.get(e.sourceNodeId)!, 0) / preds.length : order.get(n.id)!;
    };
    row.sort((a, b) => bary(a) - bary(b) || order.get(a.id)! - order.get(b.id)!);
    row.forEach((n, i) => slot.set(n.id, i));
  }
  const widest = Math.max(1, ...rows.map((r) => r.length));
  const width = PAD * 2 + widest * NODE_W + (widest - 1) * GAP_X;
  const placed: PlacedNode[] = [];
  rows.forEach((row, l) => {
    const rowWidth = row.length * NODE_W + (row.length - 1) * GAP_X;
    const x0 = (width - rowWidth) / 2;
    row.forEach((n, i) => placed.push({ ...n, layer: l, x: x0 + i * (NODE_W + GAP_X), y: PAD + l * (NODE_H + GAP_Y) }));
  });
  return {
    nodes: placed,
    edges: edges.map((e) => ({ ...e, back: back.has(e.id) || e.sourceNodeId === e.targetNodeId })),
    width,
    height: PAD * 2 + depth * NODE_H + (depth - 1) * GAP_Y,
  };
}
