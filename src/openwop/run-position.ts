import { Graph } from './graph.js';
import type { Decision, GraphState } from './graph.js';
import { NodeOutputs } from './node-outputs.js';
import { foldEvents } from './run-fold.js';
import { RunSchedule } from './run-schedule.js';
import type { RunError, RunEvent, WorkflowDefinition, WorkflowNode } from './types.js';

/**
 * Where one run stands, in memory: the graph's scheduling state, which nodes to decide again, each node's history
 * since its last start and the events that caused what. The run actor applies every transition here as it stages
 * the event recording it (and {@link fold} applies the same ones to a stored log after a restart); every update
 * touches only the nodes involved (issue 21 item 5).
 */
export class RunPosition {
  readonly graph: Graph;
  readonly state: GraphState;
  /** Nodes to decide again after a change. */
  readonly schedule: RunSchedule;
  /** Outputs of the completed nodes, lent to each execution as it begins. */
  readonly outputs = new NodeOutputs();
  /** Events of each node since its last `node.started`. */
  readonly history = new Map<string, RunEvent[]>();
  /** Each node's last terminal event id (causation of what it triggers). */
  private readonly lastEvent = new Map<string, string>();
  private readonly startedEvent = new Map<string, string>();
  /** Nodes whose attempt an `immediate` pause cut: begun afresh on resume, their cut outcome dropped. */
  readonly cut = new Set<string>();
  /** Node executions so far (for `limits.maxNodeExecutions`). */
  executions = 0;
  startedEventId = '';

  constructor(def: WorkflowDefinition) {
    this.graph = new Graph(def);
    this.state = this.graph.initialState();
    this.schedule = new RunSchedule(this.graph);
    this.schedule.markAll();
  }

  /** Applies a stored log (a resumed run); the first failure the run cannot route, if any. */
  fold(events: readonly RunEvent[]): { error: RunError; nodeId?: string } | undefined {
    const r = foldEvents(this.graph, this.state, events);
    for (const [k, v] of r.history) this.history.set(k, v);
    for (const [k, v] of r.lastEvent) this.lastEvent.set(k, v);
    for (const [k, v] of r.startedEvent) this.startedEvent.set(k, v);
    this.startedEventId = r.startedEventId;
    this.executions = r.executions;
    for (const id of r.cut) this.cut.add(id);
    for (const id of Object.keys(this.state.nodes)) this.syncOutputs(id);
    return r.failure;
  }

  node(nodeId: string): WorkflowNode {
    return this.graph.nodes.get(nodeId)!;
  }

  decide(nodeId: string, variables: Record<string, unknown>): Decision {
    return this.graph.decide(nodeId, this.state, variables);
  }

  /** Ids of the nodes a `node.started` says are running. */
  running(): string[] {
    return Object.keys(this.state.nodes).filter((id) => this.state.nodes[id]!.status === 'running');
  }

  activation(nodeId: string): number {
    return this.state.nodes[nodeId]!.activations;
  }

  historyOf(nodeId: string): RunEvent[] {
    return this.history.get(nodeId) ?? [];
  }

  /** `node.started` `eventId` of `nodeId`: a fresh attempt, its history begins anew. */
  started(nodeId: string, eventId: string): void {
    this.startedEvent.set(nodeId, eventId);
    this.graph.markStarted(this.state, nodeId);
    this.touched(nodeId);
    this.history.set(nodeId, []);
    this.executions++;
  }

  skipped(nodeId: string, eventId: string): void {
    this.graph.markSkipped(this.state, nodeId);
    this.touched(nodeId);
    this.lastEvent.set(nodeId, eventId);
  }

  /** The terminal event `eventId` of `nodeId`'s attempt. */
  ended(
    nodeId: string,
    eventId: string,
    o:
      | { status: 'completed'; outputs: Record<string, unknown>; exitLoop: boolean }
      | { status: 'failed'; error: RunError }
      | { status: 'cancelled' },
  ): void {
    if (o.status === 'completed') {
      this.graph.markTerminal(this.state, nodeId, 'completed', o.outputs);
      if (o.exitLoop) this.graph.markLoopExit(this.state, nodeId);
    } else if (o.status === 'failed') this.graph.markTerminal(this.state, nodeId, 'failed', undefined, o.error);
    else this.graph.markTerminal(this.state, nodeId, 'cancelled');
    this.touched(nodeId);
    this.lastEvent.set(nodeId, eventId);
  }

  /** The event that causes `nodeId`'s start: the latest terminal event of its sources, else `run.started`. */
  causationFor(nodeId: string): string {
    let best: string | undefined;
    let at = -1;
    for (const e of this.graph.incoming.get(nodeId) ?? []) {
      const st = this.state.nodes[e.sourceNodeId]!;
      if (st.terminalAt > at && this.lastEvent.has(e.sourceNodeId)) {
        at = st.terminalAt;
        best = this.lastEvent.get(e.sourceNodeId);
      }
    }
    return best ?? this.startedEventId;
  }

  /** The cause of `nodeId`'s terminal event: its last event (e.g. interrupt.resolved), else its start. */
  terminalCausation(nodeId: string): string {
    return this.historyOf(nodeId).at(-1)?.eventId ?? this.startedEvent.get(nodeId) ?? this.startedEventId;
  }

  /** A failed node whose failure no edge routes (it fails the run), if any. */
  unhandledFailure(): { error: RunError; nodeId: string } | undefined {
    for (const [id, st] of Object.entries(this.state.nodes))
      if (st.status === 'failed' && !this.graph.failureHandled(id)) return { error: st.error!, nodeId: id };
    return undefined;
  }

  /** The run's outputs: each completed sink node's outputs. */
  sinkOutputs(): Record<string, unknown> {
    const outputs: Record<string, unknown> = {};
    for (const id of this.graph.sinks())
      if (this.state.nodes[id]!.status === 'completed') outputs[id] = this.state.nodes[id]!.outputs ?? {};
    return outputs;
  }

  /** A transition of `nodeId` was applied: it and its dependants are decided again; its outputs kept current. */
  private touched(nodeId: string): void {
    this.schedule.changed(nodeId);
    this.syncOutputs(nodeId);
  }

  private syncOutputs(nodeId: string): void {
    const st = this.state.nodes[nodeId]!;
    if (st.status === 'completed') this.outputs.set(nodeId, st.outputs);
    else this.outputs.delete(nodeId);
  }
}
