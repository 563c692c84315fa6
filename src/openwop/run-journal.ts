import { ErrorCode, HostError, toHostError } from '../core/index.js';
import type { Clock } from '../core/index.js';
import { RunHalted } from './run-context.js';
import type { SettledRequest } from './run-requests.js';
import { untilStoreBack } from './store-retry.js';
import type { AppendInput, OpenwopStore, RunPatch } from './store.js';
import type { RunEvent, RunEventInput } from './types.js';

/** What a run's journal needs from its actor. */
export interface JournalHost {
  readonly runId: string;
  readonly store: OpenwopStore;
  readonly clock: Clock;
  /** Aborted when the actor stops driving the run (shutdown, lost lease): a store outage is no longer waited out. */
  readonly halt: AbortSignal;
  /** Told once per store outage the run waits out (HOST-093). */
  onOutage?: (err: HostError) => void;
  /** The lease fence refused a write (issue 19): the actor steps down. */
  leaseLost(): void;
}

/**
 * The writes of one run (its event log and row). Events of one scheduling step are staged and committed together
 * (issue 21 item 5: one transaction for a node's terminal event and the starts it causes); the actor commits them
 * before anything that must follow them durably (a node's execution, a side effect, telling a caller). An event's id
 * is drawn when it is staged, so the events staged after it can name it as their cause.
 */
export class RunJournal {
  private inputs: AppendInput[] = [];
  /** Per staged input, the node history it joins once committed (the history current when it was staged). */
  private into: Array<RunEvent[] | undefined> = [];
  private patch: RunPatch = {};

  constructor(private readonly host: JournalHost) {}

  /** Stages `inputs` (and `patch`, merged over what is staged) for the next {@link commit}; returns their ids. */
  stage(
    inputs: readonly RunEventInput[],
    patch: RunPatch,
    historyOf: (nodeId: string) => RunEvent[] | undefined,
  ): string[] {
    const ids: string[] = [];
    for (const i of inputs) {
      const eventId = this.host.store.newEventId();
      ids.push(eventId);
      this.inputs.push({ ...i, eventId });
      this.into.push(i.nodeId && i.type !== 'node.started' ? historyOf(i.nodeId) : undefined);
    }
    Object.assign(this.patch, patch);
    return ids;
  }

  get staged(): boolean {
    return this.inputs.length > 0 || Object.keys(this.patch).length > 0;
  }

  /** Commits what is staged (with `settle`, a forwarded request it applies) in one transaction; resolves when durable. */
  async commit(settle?: SettledRequest): Promise<RunEvent[]> {
    if (!this.staged && !settle) return [];
    const inputs = this.inputs;
    const into = this.into;
    const patch = this.patch;
    this.inputs = [];
    this.into = [];
    this.patch = {};
    // Issue 16: a store outage delays the events until the store is back; they are never dropped.
    const events = await this.fenced(() => this.host.store.append(this.host.runId, inputs, patch, settle));
    events.forEach((e, i) => into[i]?.push(e));
    return events;
  }

  /**
   * A write of this run: waits out a store outage; a write the lease fence refused (issue 19) makes the actor step
   * down (never retried) and ends the caller's work as a halt.
   */
  async fenced<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await this.untilStoreBack(fn);
    } catch (err) {
      if (!(err instanceof HostError) || err.code !== ErrorCode.HOST_RUN_LEASE_LOST) throw err;
      this.host.leaseLost();
      throw new RunHalted(`run ${this.host.runId}: ${err.message}`);
    }
  }

  private untilStoreBack<T>(fn: () => Promise<T>): Promise<T> {
    const report = this.host.onOutage;
    return untilStoreBack(fn, {
      clock: this.host.clock,
      signal: this.host.halt,
      ...(report ? { onOutage: (e: HostError) => report(withRun(e, this.host.runId)) } : {}),
    });
  }
}

/** `err` with the run it delayed named in its details. */
function withRun(err: HostError, runId: string): HostError {
  return new HostError(
    err.code,
    `run ${runId} waits for the store: ${err.message}`,
    { ...err.details, runId },
    {
      remediation: err.remediation,
      retryable: err.retryable,
      cause: err,
    },
  );
}

/** A failure of run work nobody awaits (`what`), with its code, named for its run (issue 16). */
export function runFailure(err: unknown, runId: string, what: string): HostError {
  const e = toHostError(err);
  return new HostError(
    e.code,
    `run ${runId}: ${what}: ${e.message}`,
    { ...e.details, runId, what },
    { remediation: e.remediation, retryable: e.retryable, cause: err },
  );
}
