import type { Clock, HostError } from '../core/index.js';
import type { ChildRuns, NodeRegistry } from './node-registry.js';
import type { RunDeadline } from './run-options.js';
import type { ServiceFamily } from './service-family.js';
import type { OpenwopStore } from './store.js';

/** What a run actor needs from its surroundings. */
export interface RunActorDeps {
  store: OpenwopStore;
  registry: NodeRegistry;
  clock: Clock;
  children: ChildRuns;
  /** Requests cancellation of every non-terminal child run (cascade). */
  cancelChildren(runId: string, reason: string): Promise<void>;
  /** Ceiling on node executions per run (capabilities `limits.maxNodeExecutions`). */
  maxNodeExecutions: number;
  /** The run's wall-clock deadline (RFC 0058; `runDeadlineOf`), armed from its start; absent: none. */
  runDeadline?: RunDeadline;
  /** Installed host service families (RFC 0144): their `ctx` surfaces are bound for every node. */
  families?: readonly ServiceFamily[];
  /** This host's id (RFC 0040): a run caused on another host gets `causationHostId` on its `run.started`. */
  hostId?: string;
  /** Where failures no caller sees go (a store outage the run waits out, a fault of the actor itself; HOST-093). */
  onBackgroundError?: (err: HostError) => void;
  /** Told when the fence refused this run's write (issue 19): another process drives the run now. */
  onLeaseLost?: (runId: string) => void;
}
