/** Outputs of a run's completed nodes, by node id (input expressions, `ctx.nodeOutputs`). */
export type OutputsRecord = Record<string, Record<string, unknown> | undefined>;

/**
 * The completed nodes' outputs as each execution saw them when it began, without a copy per execution (issue 21
 * item 5). An execution borrows the live record and gives it back when it ends; the record is copied only when it
 * must change while an execution still holds it, so the holder keeps the record as it was.
 */
export class NodeOutputs {
  private live: OutputsRecord = {};
  private holders = 0;

  /** The record for an execution beginning now; hand it back with {@link release} when the execution ends. */
  borrow(): OutputsRecord {
    this.holders++;
    return this.live;
  }

  release(record: OutputsRecord): void {
    if (record === this.live && this.holders > 0) this.holders--;
  }

  set(nodeId: string, outputs: Record<string, unknown> | undefined): void {
    this.writable()[nodeId] = outputs;
  }

  delete(nodeId: string): void {
    if (nodeId in this.live) delete this.writable()[nodeId];
  }

  private writable(): OutputsRecord {
    if (this.holders > 0) {
      this.live = { ...this.live };
      this.holders = 0;
    }
    return this.live;
  }
}
