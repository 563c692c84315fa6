import { SnapshotFold } from './snapshot.js';
import type { RunSnapshot } from './snapshot.js';
import type { OpenwopStore, StoredRun } from './store.js';

/**
 * Run snapshots kept incrementally (issue 21 item 5): each run read recently has its {@link SnapshotFold}, and a
 * snapshot applies only the events appended since the last one, read from the store (so appends of any process of a
 * shared store are seen). A run's log is append-only and its definition fixed, so a kept fold is never stale, only
 * behind. At most `capacity` folds are kept, the least recently read dropped first; a dropped run is folded afresh
 * from its whole log (read page by page, no cap) on its next read.
 */
export class SnapshotCache {
  private readonly folds = new Map<string, SnapshotFold>();

  constructor(
    private readonly store: OpenwopStore,
    private readonly capacity = 1_000,
  ) {}

  async snapshot(run: StoredRun): Promise<RunSnapshot> {
    let fold = this.folds.get(run.runId);
    if (fold) this.folds.delete(run.runId);
    else fold = new SnapshotFold(run.definition);
    this.folds.set(run.runId, fold);
    if (this.folds.size > this.capacity) this.folds.delete(this.folds.keys().next().value!);
    // Concurrent reads of one run may fetch the same events: the fold applies each sequence once.
    for (const e of await this.store.events(run.runId, fold.lastSequence)) fold.apply(e);
    return fold.snapshot(run);
  }
}
