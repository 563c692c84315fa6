// Shared setup for the replay/fork tests: a real OpenWOP host over a real store on a simulated clock (so the
// conformance fixtures' long delays pass without waiting), reopened on the same store and effect counts for restart
// tests, plus helpers to drive the clock until a run ends and to read a run's events.
import { expect } from 'vitest';
import { SimulatedClock } from '../../src/core/index.js';
import { openDb } from '../../src/ledger/index.js';
import type { Db } from '../../src/ledger/index.js';
import { createOpenwopHost } from '../../src/openwop/host.js';
import type { OpenwopHost } from '../../src/openwop/host.js';
import type { NodeModule } from '../../src/openwop/node-registry.js';
import { openwopSchemas } from '../../src/openwop/schemas.js';
import { TERMINAL_STATUSES } from '../../src/openwop/types.js';
import type { RunEvent, RunStatus } from '../../src/openwop/types.js';

/** The client every test forks as. */
export const CALLER = { principal: 'replay-test' };

// A short real pause, so store I/O (a PostgreSQL round trip) lands between clock steps.
const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 2));

/** One host process over `location` (a SQLite file or PostgreSQL URL); `reopen` starts another on the same store. */
export class ReplayHost {
  host!: OpenwopHost;
  private db!: Db;
  private isOpen = false;
  /** Effect-seam counts, kept across a reopen (the counter the conformance suite reads). */
  readonly counts = new Map<string, number>();
  readonly clock = new SimulatedClock();

  constructor(
    readonly location: string,
    private readonly nodes: NodeModule[] = [],
  ) {}

  async open(): Promise<OpenwopHost> {
    this.db = await openDb(this.location);
    this.host = await createOpenwopHost({
      db: this.db,
      clock: this.clock,
      workflowsDir: false,
      effectCounts: this.counts,
      nodes: this.nodes,
    });
    this.isOpen = true;
    return this.host;
  }

  /** Halts the host (the clock is moved so the shutdown grace elapses) and closes its Db. */
  async close(): Promise<void> {
    if (!this.isOpen) return;
    this.isOpen = false;
    let done = false;
    const closing = this.host.close(100).finally(() => (done = true));
    while (!done) {
      this.clock.advance(50);
      await tick();
    }
    await closing;
    await this.db.close();
  }

  async reopen(): Promise<OpenwopHost> {
    await this.close();
    return this.open();
  }

  /**
   * Waits until `runId` is terminal, moving the clock (1 s steps) only while the run's last event (after a restart's
   * `run.resuming`) is a sleep checkpoint, so a slow store never pushes a run past its `settings.timeout`; its status.
   */
  async drive(runId: string): Promise<RunStatus> {
    for (let i = 0; i < 50_000; i++) {
      const r = await this.host.store.getRun(runId);
      if (r && TERMINAL_STATUSES.has(r.status)) return r.status;
      const tail = await this.host.store.events(runId, (r?.lastSequence ?? 0) - 2);
      const last = tail.filter((e) => e.type !== 'run.resuming').at(-1); // a resumed sleep re-arms silently
      if (last?.type === 'log.appended' && String(last.payload.message).startsWith('checkpoint sleep'))
        this.clock.advance(1000);
      await tick();
    }
    throw new Error(`run ${runId} did not end`);
  }

  /** Starts a run of `workflowId`; its id. */
  async start(workflowId: string, inputs: Record<string, unknown> = {}): Promise<string> {
    return (await this.host.runs.createRun({ workflowId, inputs }, CALLER)).run.runId;
  }

  /** Resolves once `nodeId` of `runId` has recorded its sleep (the node is waiting on the clock). */
  async sleeping(runId: string, nodeId: string, count = 1): Promise<void> {
    for (let i = 0; i < 5000; i++) {
      const n = (await this.host.store.events(runId)).filter(
        (e) =>
          e.type === 'log.appended' && e.nodeId === nodeId && String(e.payload.message).startsWith('checkpoint sleep'),
      ).length;
      if (n >= count) return;
      await tick();
    }
    throw new Error(`${nodeId} of ${runId} never slept`);
  }

  events(runId: string): Promise<RunEvent[]> {
    return this.host.store.events(runId);
  }
}

/** Every event of `runId` matches run-event.schema.json and its payload $def. */
export async function expectValidLog(h: ReplayHost, runId: string): Promise<RunEvent[]> {
  const events = await h.events(runId);
  const schemas = openwopSchemas();
  for (const e of events) expect(schemas.checkEvent(e), `${e.type} #${e.sequence}`).toEqual([]);
  expect(events.map((e) => e.sequence)).toEqual(events.map((_, i) => i));
  return events;
}

/** The `node.failed` / `node.completed` events of `nodeId`, in order. */
export function outcomesOf(events: readonly RunEvent[], nodeId: string): RunEvent[] {
  return events.filter((e) => e.nodeId === nodeId && (e.type === 'node.completed' || e.type === 'node.failed'));
}
