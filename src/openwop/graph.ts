import { evaluateCondition } from './expressions.js';
import type { RunError, TriggerRule, WorkflowDefinition, WorkflowEdge, WorkflowNode } from './types.js';

/** Where one node stands in the current run. */
export type NodeStatus = 'pending' | 'running' | 'completed' | 'failed' | 'skipped' | 'cancelled';

export interface NodeState {
  status: NodeStatus;
  /** How many times the node was started or skipped. */
  activations: number;
  /** Step at the last activation; -1 when never activated. */
  activatedAt: number;
  /** Step at the last terminal transition; -1 when never terminal. */
  terminalAt: number;
  outputs?: Record<string, unknown>;
  error?: RunError;
  /** Set when the node completed with `exitLoop`: its edges back into its own cycle do not fire. */
  exitLoop?: boolean;
}

/**
 * The scheduling state of a run. Pure data: the run actor applies the same transitions live and
 * when folding the event log after a restart, so both arrive at the same state.
 */
export interface GraphState {
  step: number;
  nodes: Record<string, NodeState>;
}

/** Decision for one node after a change upstream. */
export type Decision = 'start' | 'skip' | 'wait';

const ANY_RULES: ReadonlySet<TriggerRule> = new Set(['any_success', 'any_failed']);

/** Static facts about a definition, computed once per run. */
export class Graph {
  readonly incoming = new Map<string, WorkflowEdge[]>();
  readonly outgoing = new Map<string, WorkflowEdge[]>();
  /** Nodes by id, and each node's place in the definition (the order scheduling passes visit them in). */
  readonly nodes = new Map<string, WorkflowNode>();
  readonly order = new Map<string, number>();
  /** Incoming edges of each node split by rule kind (`any_*` against the rest), computed once. */
  private readonly anyIn = new Map<string, WorkflowEdge[]>();
  private readonly allIn = new Map<string, WorkflowEdge[]>();
  /** Nodes with an incoming edge that has a condition (their decision may change when the variables do). */
  readonly conditional: string[] = [];
  private readonly reach = new Map<string, Set<string>>();
  private entries: Set<string> | undefined;

  constructor(readonly def: WorkflowDefinition) {
    def.nodes.forEach((n, i) => {
      this.nodes.set(n.id, n);
      this.order.set(n.id, i);
      this.incoming.set(n.id, []);
      this.outgoing.set(n.id, []);
      this.anyIn.set(n.id, []);
      this.allIn.set(n.id, []);
    });
    for (const e of def.edges) {
      this.incoming.get(e.targetNodeId)?.push(e);
      this.outgoing.get(e.sourceNodeId)?.push(e);
      (ANY_RULES.has(e.triggerRule ?? 'all_success') ? this.anyIn : this.allIn).get(e.targetNodeId)?.push(e);
    }
    for (const n of def.nodes) if (this.incoming.get(n.id)!.some((e) => e.condition)) this.conditional.push(n.id);
  }

  /** Nodes reachable from `from` by following edges (not including `from` unless on a cycle). */
  reachableFrom(from: string): Set<string> {
    let r = this.reach.get(from);
    if (!r) {
      r = new Set();
      const stack = [...(this.outgoing.get(from) ?? [])].map((e) => e.targetNodeId);
      while (stack.length) {
        const n = stack.pop()!;
        if (r.has(n)) continue;
        r.add(n);
        for (const e of this.outgoing.get(n) ?? []) stack.push(e.targetNodeId);
      }
      this.reach.set(from, r);
    }
    return r;
  }

  /**
   * Nodes that start a cycle nothing else enters (e.g. supervisor ⇄ dispatch): every incoming edge is a back
   * edge of a depth-first walk from the roots, then from unvisited nodes in definition order.
   */
  loopEntries(): Set<string> {
    if (this.entries) return this.entries;
    const order = new Map<string, number>();
    const onStack = new Set<string>();
    const back = new Set<WorkflowEdge>();
    const walk = (id: string): void => {
      order.set(id, order.size);
      onStack.add(id);
      for (const e of this.outgoing.get(id) ?? []) {
        if (onStack.has(e.targetNodeId)) back.add(e);
        else if (!order.has(e.targetNodeId)) walk(e.targetNodeId);
      }
      onStack.delete(id);
    };
    for (const n of this.def.nodes) if (!(this.incoming.get(n.id) ?? []).length) walk(n.id);
    for (const n of this.def.nodes) if (!order.has(n.id)) walk(n.id);
    this.entries = new Set(
      this.def.nodes
        .filter((n) => {
          const inc = this.incoming.get(n.id) ?? [];
          return inc.length > 0 && inc.every((e) => back.has(e));
        })
        .map((n) => n.id),
    );
    return this.entries;
  }

  initialState(): GraphState {
    const nodes: Record<string, NodeState> = {};
    for (const n of this.def.nodes)
      nodes[n.id] = { status: 'pending', activations: 0, activatedAt: -1, terminalAt: -1 };
    return { step: 0, nodes };
  }

  /** True when a failure of `nodeId` is routed by an edge (`any_failed` / `all_complete`), so it does not fail the run. */
  failureHandled(nodeId: string): boolean {
    return (this.outgoing.get(nodeId) ?? []).some(
      (e) => e.triggerRule === 'any_failed' || e.triggerRule === 'all_complete',
    );
  }

  private edgeSatisfied(e: WorkflowEdge, s: GraphState, variables: Record<string, unknown>): boolean {
    const src = s.nodes[e.sourceNodeId]!;
    if (src.exitLoop && this.reachableFrom(e.targetNodeId).has(e.sourceNodeId)) return false;
    const rule = e.triggerRule ?? 'all_success';
    let ok: boolean;
    switch (rule) {
      case 'all_success':
      case 'any_success':
        ok = src.status === 'completed';
        break;
      case 'any_failed':
        ok = src.status === 'failed';
        break;
      case 'all_complete':
        // Done either way, skipped included.
        ok = src.status === 'completed' || src.status === 'failed' || src.status === 'skipped';
        break;
      case 'none_failed':
        ok = src.status === 'completed' || src.status === 'skipped';
        break;
    }
    if (ok && e.condition && src.status === 'completed') {
      ok = evaluateCondition(e.condition, { outputs: src.outputs ?? {}, status: src.status }, variables);
    }
    return ok;
  }

  /**
   * Whether `nodeId` should start, be skipped, or keep waiting. An incoming edge counts once its
   * source has finished since the node's last activation. `any_*` edges start the node as soon as one
   * is satisfied; the other rules need every such edge finished and satisfied. A node that already
   * ran in this pass is started again only through an edge from downstream of it (a loop back).
   */
  decide(nodeId: string, s: GraphState, variables: Record<string, unknown>): Decision {
    const node = this.nodes.get(nodeId)!;
    const st = s.nodes[nodeId]!;
    if (st.status === 'running') return 'wait';
    const incoming = this.incoming.get(nodeId)!;
    if (!incoming.length || (st.activations === 0 && this.loopEntries().has(nodeId))) {
      if (st.activations > 0) return 'wait';
      return node.disabled ? 'skip' : 'start';
    }
    const ran = st.activations > 0;
    let fires = false;
    for (const e of this.anyIn.get(nodeId)!)
      if (this.counts(e, nodeId, st, s, ran) && this.edgeSatisfied(e, s, variables)) {
        fires = true;
        break;
      }
    const all = this.allIn.get(nodeId)!;
    if (!fires && all.length > 0) fires = this.allFire(all, nodeId, st, s, ran, variables);
    if (fires) return node.disabled ? 'skip' : 'start';
    // Skip once every incoming edge has resolved without firing, unless the node already finished this pass.
    const done = st.terminalAt > st.activatedAt || (ran && st.activatedAt >= 0 && st.terminalAt >= st.activatedAt);
    if (!done && incoming.every((e) => s.nodes[e.sourceNodeId]!.terminalAt > st.activatedAt)) return 'skip';
    return 'wait';
  }

  /** Every edge of `all` counts and is satisfied (the non-`any_*` rules). */
  private allFire(
    all: readonly WorkflowEdge[],
    nodeId: string,
    st: NodeState,
    s: GraphState,
    ran: boolean,
    variables: Record<string, unknown>,
  ): boolean {
    for (const e of all) if (!this.counts(e, nodeId, st, s, ran)) return false;
    for (const e of all) if (!this.edgeSatisfied(e, s, variables)) return false;
    return true;
  }

  /**
   * Whether edge `e` into `nodeId` counts: its source finished since the node's last activation, and a node that
   * already ran is started again only through an edge from downstream of it (a loop back).
   */
  private counts(e: WorkflowEdge, nodeId: string, st: NodeState, s: GraphState, ran: boolean): boolean {
    return (
      s.nodes[e.sourceNodeId]!.terminalAt > st.activatedAt && (!ran || this.reachableFrom(nodeId).has(e.sourceNodeId))
    );
  }

  /** Applies an activation (`running`), returns the new step. */
  markStarted(s: GraphState, nodeId: string): void {
    const st = s.nodes[nodeId]!;
    s.step++;
    st.status = 'running';
    st.activations++;
    st.activatedAt = s.step;
    delete st.outputs;
    delete st.error;
    delete st.exitLoop;
  }

  /** Records that a completed node ends its loop (see {@link NodeState.exitLoop}). */
  markLoopExit(s: GraphState, nodeId: string): void {
    s.nodes[nodeId]!.exitLoop = true;
  }

  markTerminal(
    s: GraphState,
    nodeId: string,
    status: 'completed' | 'failed' | 'cancelled',
    outputs?: Record<string, unknown>,
    error?: RunError,
  ): void {
    const st = s.nodes[nodeId]!;
    s.step++;
    st.status = status;
    st.terminalAt = s.step;
    if (outputs) st.outputs = outputs;
    if (error) st.error = error;
  }

  markSkipped(s: GraphState, nodeId: string): void {
    const st = s.nodes[nodeId]!;
    s.step++;
    st.status = 'skipped';
    st.activations++;
    st.activatedAt = s.step;
    st.terminalAt = s.step;
  }

  /** Nodes that have no outgoing edges (their outputs are the run's outputs). */
  sinks(): string[] {
    return this.def.nodes.filter((n) => !(this.outgoing.get(n.id) ?? []).length).map((n) => n.id);
  }
}
