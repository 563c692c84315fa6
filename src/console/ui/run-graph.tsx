// The run's node graph (issue 18 item 2): the workflow definition's nodes and edges in a layered layout, each node
// coloured by its state in the run's snapshot (re-read on every event of the live timeline), the state also in words
// and a symbol, never by colour alone.
import { useEffect, useState } from 'preact/hooks';
import { runApi } from './api.js';
import { layoutGraph, NODE_H, NODE_W } from './run-graph-layout.js';
import type { GraphEdge, GraphNode, PlacedNode } from './run-graph-layout.js';
import type { RunSnapshot } from './run-types.js';

interface Definition {
  id: string;
  nodes: GraphNode[];
  edges?: GraphEdge[];
}

const SYMBOL: Record<string, string> = {
  pending: '○',
  running: '▶',
  suspended: '◐',
  waiting: '◐',
  completed: '✔',
  failed: '✖',
  skipped: '–',
  cancelled: '■',
};
const BACK_MARGIN = 48;

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

function NodeBox({ n, status, waiting }: { n: PlacedNode; status: string; waiting: boolean }) {
  const shown = waiting ? 'waiting' : status;
  const label = waiting ? 'waiting for an answer' : status;
  return (
    <g class="node" data-node-id={n.id} data-status={status} data-waiting={String(waiting)}>
      <title>{`${n.name ?? n.id} (${n.id}, ${n.typeId ?? 'node'}): ${status}${waiting ? ', waiting for an answer' : ''}`}</title>
      <rect x={n.x} y={n.y} width={NODE_W} height={NODE_H} rx={6} class={`state-${shown}`} />
      <text x={n.x + 8} y={n.y + 19} class="node-name">
        {clip(n.name ?? n.id, 22)}
      </text>
      <text x={n.x + 8} y={n.y + 38} class="node-status">
        {`${SYMBOL[shown] ?? '?'} ${clip(label, 24)}`}
      </text>
    </g>
  );
}

export function RunGraph({ snap }: { snap: RunSnapshot }) {
  const [def, setDef] = useState<Definition | null>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    let live = true;
    void runApi<Definition>('GET', `/workflows/${encodeURIComponent(snap.workflowId)}`)
      .then((d) => live && setDef(d))
      .catch(() => live && setFailed(true));
    return () => {
      live = false;
    };
  }, [snap.workflowId]);
  // The run's own nodes (its snapshot) are authoritative; the definition adds names and edges.
  const byId = new Map((def?.nodes ?? []).map((n) => [n.id, n]));
  const nodes: GraphNode[] = Object.entries(snap.nodeStates).map(([id, s]) => ({
    id,
    name: byId.get(id)?.name ?? id,
    typeId: s.typeId ?? byId.get(id)?.typeId,
  }));
  if (!def && !failed) return <p>Reading the workflow definition…</p>;
  const g = layoutGraph(nodes, def?.edges ?? []);
  const at = new Map(g.nodes.map((n) => [n.id, n]));
  const anyBack = g.edges.some((e) => e.back);
  const width = g.width + (anyBack ? BACK_MARGIN : 0);
  const waiting = new Set(snap.pendingInterrupts.map((i) => i.nodeId));
  return (
    <figure class="run-graph">
      <svg
        id="run-graph"
        viewBox={`0 0 ${width} ${g.height}`}
        width={width}
        height={g.height}
        role="img"
        aria-label={`Node graph of run ${snap.runId}: ${g.nodes.length} nodes, ${g.edges.length} edges`}
      >
        <defs>
          <marker
            id="run-graph-arrow"
            viewBox="0 0 10 10"
            refX="9"
            refY="5"
            markerWidth="7"
            markerHeight="7"
            orient="auto"
          >
            <path d="M0,0 L10,5 L0,10 z" class="arrow" />
          </marker>
        </defs>
        {g.edges.map((e) => {
          const s = at.get(e.sourceNodeId)!;
          const t = at.get(e.targetNodeId)!;
          let d: string;
          if (e.back) {
            const x = Math.max(s.x, t.x) + NODE_W;
            d = `M${s.x + NODE_W},${s.y + NODE_H / 2} C${x + BACK_MARGIN - 8},${s.y + NODE_H / 2} ${x + BACK_MARGIN - 8},${t.y + NODE_H / 2} ${t.x + NODE_W},${t.y + NODE_H / 2}`;
          } else {
            const [x1, y1, x2, y2] = [s.x + NODE_W / 2, s.y + NODE_H, t.x + NODE_W / 2, t.y];
            const m = (y1 + y2) / 2;
            d = `M${x1},${y1} C${x1},${m} ${x2},${m} ${x2},${y2}`;
          }
          return (
            <path
              key={e.id}
              d={d}
              data-edge-id={e.id}
              data-source={e.sourceNodeId}
              data-target={e.targetNodeId}
              class={e.back ? 'edge back' : 'edge'}
              marker-end="url(#run-graph-arrow)"
            />
          );
        })}
        {g.nodes.map((n) => (
          <NodeBox key={n.id} n={n} status={snap.nodeStates[n.id]?.status ?? 'pending'} waiting={waiting.has(n.id)} />
        ))}
      </svg>
      <figcaption>
        {failed ? 'The workflow definition could not be read: nodes shown without their edges. ' : ''}
        Each node says its state in words and a symbol: ○ pending, ▶ running, ◐ waiting, ✔ completed, ✖ failed, –
        skipped, ■ cancelled; a dashed edge loops back.
      </figcaption>
    </figure>
  );
}
