import type { Graph, GraphState } from './graph.js';
import type { RunError, RunEvent } from './types.js';

/** What a run's event log says about where it stands (the run actor's state after a restart). */
export interface FoldResult {
  /** Events of each node since its last `node.started`. */
  history: Map<string, RunEvent[]>;
  /** Each node's last terminal event id (causation of what it triggers). */
  lastEvent: Map<string, string>;
  /** Each node's last `node.started` event id. */
  startedEvent: Map<string, string>;
  startedEventId: string;
  /** The first failure the run cannot route (an unhandled node failure or a breached cap). */
  failure?: { error: RunError; nodeId?: string };
  /** Node executions so far (for `limits.maxNodeExecutions`). */
  executions: number;
  /** Nodes whose attempt an `immediate` pause cut and that have not started afresh (begun anew, never resumed). */
  cut: Set<string>;
}

/**
 * Replays a run's events onto `state` with the same graph transitions the actor applies live, so a
 * resumed run knows which nodes completed (never run again) and which were in flight.
 */
export function foldEvents(graph: Graph, state: GraphState, events: readonly RunEvent[]): FoldResult {
  const r: FoldResult = {
    history: new Map(),
    lastEvent: new Map(),
    startedEvent: new Map(),
    startedEventId: '',
    executions: 0,
    cut: new Set(),
  };
  for (const e of events) {
    const nodeId = e.nodeId ?? (e.payload.nodeId as string | undefined);
    switch (e.type) {
      case 'run.started':
        r.startedEventId = e.eventId;
        break;
      case 'run.paused':
        for (const id of Array.isArray(e.payload.interruptedNodeIds) ? e.payload.interruptedNodeIds : [])
          if (typeof id === 'string') r.cut.add(id);
        break;
      case 'node.started':
        r.cut.delete(nodeId!);
        r.startedEvent.set(nodeId!, e.eventId);
        graph.markStarted(state, nodeId!);
        r.history.set(nodeId!, []);
        r.executions++;
        break;
      case 'node.completed':
        graph.markTerminal(state, nodeId!, 'completed', e.payload.outputs as Record<string, unknown>);
        if (e.payload.exitLoop === true) graph.markLoopExit(state, nodeId!);
        break;
      case 'node.failed':
        graph.markTerminal(state, nodeId!, 'failed', undefined, e.payload.error as RunError);
        if (!graph.failureHandled(nodeId!)) r.failure ??= { error: e.payload.error as RunError, nodeId: nodeId! };
        break;
      case 'node.cancelled':
        graph.markTerminal(state, nodeId!, 'cancelled');
        break;
      case 'node.skipped':
        graph.markSkipped(state, nodeId!);
        break;
      case 'cap.breached':
        r.failure ??= { error: { code: 'cap_breached', message: `limit ${String(e.payload.kind)} reached` } };
        break;
      default:
        if (nodeId) r.history.get(nodeId)?.push(e);
    }
    if (nodeId && /^node\.(completed|failed|skipped|cancelled)$/.test(e.type)) r.lastEvent.set(nodeId, e.eventId);
  }
  return r;
}
