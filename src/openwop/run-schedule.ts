import type { Graph } from './graph.js';

/** A binary min-heap of node positions. */
class PositionHeap {
  private readonly a: number[] = [];

  get size(): number {
    return this.a.length;
  }

  push(v: number): void {
    const a = this.a;
    let i = a.push(v) - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p]! <= v) break;
      a[i] = a[p]!;
      i = p;
    }
    a[i] = v;
  }

  pop(): number | undefined {
    const a = this.a;
    const top = a[0];
    const last = a.pop();
    if (top === undefined || last === undefined || a.length === 0) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= a.length) break;
      const c = l + 1 < a.length && a[l + 1]! < a[l]! ? l + 1 : l;
      if (a[c]! >= last) break;
      a[i] = a[c]!;
      i = c;
    }
    a[i] = last;
    return top;
  }
}

/**
 * The nodes a run must decide again (issue 21 item 5: only what a change can affect, never the whole graph), taken
 * in the order repeated passes over the definition would visit them: a pass takes marked nodes by their place in the
 * definition; a node marked at or before the place the pass has reached waits for the next pass. A node whose own
 * state, an upstream node's state, or (for a conditional incoming edge) the variables have not changed since it was
 * last decided would be decided `wait` again, so leaving it unmarked gives the same schedule as deciding every node
 * in every pass until a pass changes nothing.
 */
export class RunSchedule {
  private current = new PositionHeap();
  private next = new PositionHeap();
  private inCurrent: Uint8Array;
  private inNext: Uint8Array;
  private readonly ids: string[];
  /** Place of the node the pass decided last; -1 before the first. */
  private cursor = -1;

  constructor(private readonly graph: Graph) {
    this.ids = graph.def.nodes.map((n) => n.id);
    this.inCurrent = new Uint8Array(this.ids.length);
    this.inNext = new Uint8Array(this.ids.length);
  }

  /** Every node (a run starting or resuming). */
  markAll(): void {
    for (const id of this.ids) this.mark(id);
  }

  /** `nodeId` changed: it and the nodes it has edges into are decided again. */
  changed(nodeId: string): void {
    this.mark(nodeId);
    for (const e of this.graph.outgoing.get(nodeId) ?? []) this.mark(e.targetNodeId);
  }

  /** The variables changed: nodes with a conditional incoming edge are decided again. */
  variablesChanged(): void {
    for (const id of this.graph.conditional) this.mark(id);
  }

  mark(nodeId: string): void {
    const i = this.graph.order.get(nodeId);
    if (i === undefined) return;
    if (i > this.cursor) {
      if (this.inCurrent[i]) return;
      this.inCurrent[i] = 1;
      this.current.push(i);
    } else {
      if (this.inNext[i]) return;
      this.inNext[i] = 1;
      this.next.push(i);
    }
  }

  /** Starts a pass from the first node (each `advance` begins one); marks left from before are kept. */
  restart(): void {
    this.cursor = -1;
    for (let i = this.next.pop(); i !== undefined; i = this.next.pop()) {
      this.inNext[i] = 0;
      this.mark(this.ids[i]!);
    }
  }

  /** The next node to decide, or undefined once a whole pass found nothing marked. */
  take(): string | undefined {
    if (!this.current.size) {
      if (!this.next.size) return undefined;
      // The finished pass left its heap and flags empty: they serve the pass after this one.
      [this.current, this.next] = [this.next, this.current];
      [this.inCurrent, this.inNext] = [this.inNext, this.inCurrent];
      this.cursor = -1;
    }
    const i = this.current.pop()!;
    this.inCurrent[i] = 0;
    this.cursor = i;
    return this.ids[i];
  }
}
