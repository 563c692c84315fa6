import { ErrorCode, HostError, H, toHostError } from '../core/index.js';
import type { Clock } from '../core/index.js';
import type { NodeRegistry } from './node-registry.js';
import { childRunsOf } from './child-run-starter.js';
import { withChildRuns } from './child-run-view.js';
import { initialVariables } from './prepared-run.js';
import { checkRunSampling, runDeadlineOf } from './run-options.js';
import type { RunDeadline, RunModelLimits } from './run-options.js';
import type { ParentLink, PreparedRun } from './prepared-run.js';
import { RunWaiters } from './run-waiters.js';
import { mergeCapabilities } from './service-family.js';
import type { ServiceFamily } from './service-family.js';
import { checkMockProvider } from './services/mock-providers.js';
import { RunActor } from './run-actor.js';
import { RunHalted } from './run-context.js';
import type { RunOwnership } from './run-ownership.js';
import {
  FORWARD_WAIT_MS,
  invalidatedInterrupt,
  reportUnlessLost,
  RunRequestForwarding,
} from './run-request-forwarding.js';
import type { RunRequests } from './run-requests.js';
import type { RunSnapshot } from './snapshot.js';
import { SnapshotCache } from './snapshot-cache.js';
import type { DrainPolicy } from './run-pause.js';
import type { OpenwopStore, StoredRun } from './store.js';
import { contextFrom, startSpan } from './tracing.js';
import { TERMINAL_STATUSES } from './types.js';
import { checkVariableWrite } from './variable-write.js';
import type { CreateRunRequest, RunStatus } from './types.js';
import type { WorkflowCatalog } from './workflows.js';

/** Options of {@link RunManager}. */
export interface RunManagerOptions {
  store: OpenwopStore;
  registry: NodeRegistry;
  catalog: WorkflowCatalog;
  clock: Clock;
  /** Ceiling on node executions per run (advertised as `limits.maxNodeExecutions`). */
  maxNodeExecutions?: number;
  /** What the host's model calls accept: a run whose sampling its provider would refuse is refused at create. */
  modelLimits?: RunModelLimits;
  /** Host wall-clock ceiling per run (advertised as `limits.maxRunDurationMs`, RFC 0058); absent: none. */
  maxRunDurationMs?: number;
  /** Installed host service families (RFC 0144). */
  families?: readonly ServiceFamily[];
  /** This host's id (RFC 0040 `crossHostCausation.hostId`), for the `causationHostId` of runs caused elsewhere. */
  hostId?: string;
  /** Where the run actors report failures no caller sees (HOST-093; `serve` logs them). */
  onBackgroundError?: (err: HostError) => void;
  /**
   * The run leases of this process on a shared PostgreSQL store (issue 19): it drives only the runs it holds, takes
   * over lapsed ones and steps down from lost ones. Absent (SQLite): this process drives every run of the store.
   */
  ownership?: RunOwnership;
  /**
   * Requests (cancel, interrupt answer, variable write) of runs another process drives, stored for that process
   * (issue 19); absent (SQLite), this process drives every run.
   */
  requests?: RunRequests;
}

function deadlineOf(run: StoredRun, ceiling: number | undefined): { runDeadline?: RunDeadline } {
  const runDeadline = runDeadlineOf(run, ceiling);
  return runDeadline ? { runDeadline } : {};
}

/** Who asks (for `Idempotency-Key` scoping and `cancelledBy` / `decidedBy`). */
export type { Caller } from './node-registry.js';
import type { Caller } from './node-registry.js';

/**
 * Owns the run actors of this process: creates runs (idempotently), starts child runs, resumes
 * every non-terminal run on start, cancels, resolves interrupts and projects snapshots.
 */
export class RunManager {
  readonly maxNodeExecutions: number;
  private readonly actors = new Map<string, RunActor>();
  private readonly waiters = new RunWaiters();
  /** Requests of runs another process drives (issue 19); absent (SQLite), this process drives every run. */
  private readonly forwarding: RunRequestForwarding | undefined;
  /** Request applications started by lease sweeps, awaited on shutdown. */
  private readonly sweeping = new Set<Promise<void>>();
  private closed = false;
  /** `testing.mockProviders` as the installed families advertise it (undefined: none, mock providers forbidden). */
  private readonly mockProviders: readonly string[] | undefined;
  private readonly snapshots: SnapshotCache;

  constructor(private readonly o: RunManagerOptions) {
    this.maxNodeExecutions = o.maxNodeExecutions ?? 1000;
    const testing = mergeCapabilities(...(o.families ?? []).map((f) => f.capabilities())).testing as
      { mockProviders?: string[] } | undefined;
    this.mockProviders = testing?.mockProviders;
    this.snapshots = new SnapshotCache(o.store);
    this.forwarding = o.requests
      ? new RunRequestForwarding({
          store: o.store,
          requests: o.requests,
          clock: o.clock,
          actors: this.actors,
          closed: () => this.closed,
          ...(o.onBackgroundError ? { onBackgroundError: o.onBackgroundError } : {}),
        })
      : undefined;
  }

  /** Starts a run of a registered workflow. With the same idempotency key, returns the first run. */
  async createRun(
    req: CreateRunRequest,
    caller: Caller,
    idempotencyKey?: string,
    /** `traceparent`: the caller's W3C trace context (another host's span): the run continues that trace. */
    opts: { traceparent?: string } = {},
  ): Promise<{ run: StoredRun; created: boolean }> {
    const def = await this.o.catalog.get(req.workflowId);
    if (!def)
      throw new HostError(ErrorCode.NOT_FOUND, `workflow ${req.workflowId} is not registered`, {
        workflowId: req.workflowId,
      });
    checkMockProvider(req.configurable, this.mockProviders);
    if (this.o.modelLimits) checkRunSampling(req.configurable, this.o.modelLimits);
    const inputs = req.inputs ?? {};
    return this.insertAndStart({
      def,
      inputs,
      variables: initialVariables(def, inputs),
      principal: caller.principal,
      idempotencyKey: idempotencyKey ? `${caller.principal}:${idempotencyKey}` : null,
      requestDigest: H(req as unknown as Record<string, unknown>),
      tags: req.tags ?? [],
      metadata: req.metadata ?? {},
      configurable: req.configurable ?? {},
      ...(opts.traceparent ? { traceparent: opts.traceparent } : {}),
      spread: true,
    });
  }

  /**
   * Creates and starts a run whose row and event log `prepare` seeds before its actor starts (a fork: fork.ts). The
   * same idempotency as {@link createRun}: a reused key returns the first run and `prepare` does not run.
   */
  startPrepared(
    a: PreparedRun,
    prepare: (run: StoredRun) => Promise<void>,
  ): Promise<{ run: StoredRun; created: boolean }> {
    checkMockProvider(a.configurable, this.mockProviders); // a branch overlay may name one (run-options.md)
    if (this.o.modelLimits) checkRunSampling(a.configurable, this.o.modelLimits);
    return this.insertAndStart({ ...a, prepare });
  }

  private async insertAndStart(
    a: PreparedRun & {
      prepare?: (run: StoredRun) => Promise<void>;
      parent?: ParentLink;
      traceparent?: string;
      /** A top-level run may be handed to a less loaded process (issue 19); child runs and forks stay here. */
      spread?: boolean;
    },
  ): Promise<{ run: StoredRun; created: boolean }> {
    if (this.closed) throw new HostError(ErrorCode.CONFLICT, 'the host is shutting down', {}, { retryable: true });
    // A node may refuse the run before anything is stored (e.g. a roster over maxParticipants, RFC 0239 §C).
    for (const n of a.def.nodes) if (this.o.registry.has(n.typeId)) this.o.registry.get(n.typeId).admit?.(n);
    // The run's trace: a child run continues its parent's trace.
    const root = startSpan('openwop.run.create', contextFrom(a.parent?.traceparent ?? a.traceparent), {
      'openwop.workflow_id': a.def.id,
    });
    root.span.end();
    const limit = a.configurable.recursionLimit;
    const made = await this.o.store.createRun({
      ...(a.spread && !a.prepare ? { spread: true } : {}),
      workflow: a.def,
      inputs: a.inputs,
      variables: a.variables,
      tags: a.tags,
      metadata: a.metadata,
      configurable: a.configurable,
      principal: a.principal,
      idempotencyKey: a.idempotencyKey,
      requestDigest: a.requestDigest,
      traceparent: root.traceparent ?? null,
      parentRunId: a.parent?.runId ?? null,
      parentNodeId: a.parent?.nodeId ?? null,
    });
    let run = made.run;
    if (made.created && !made.driven) {
      await this.waitStarted(run.runId);
      return { run: (await this.o.store.getRun(run.runId)) ?? run, created: true };
    }
    if (made.created && a.prepare) {
      await a.prepare(run);
      run = (await this.o.store.getRun(run.runId))!;
    }
    if (made.created)
      await this.spawn(
        run,
        typeof limit === 'number' && limit > 0 ? Math.min(limit, this.maxNodeExecutions) : undefined,
      );
    return { run, created: made.created };
  }

  /**
   * Waits (up to 5 s, as a forwarded request does) until the process a new run was handed to appended its first event
   * (issue 19), so the answer shows the run started; a process that died first leaves the run to a takeover.
   */
  private async waitStarted(runId: string): Promise<void> {
    let done: () => void = () => undefined;
    const started = new Promise<void>((resolve) => (done = resolve));
    const off = this.o.store.subscribe(runId, () => done());
    const t = this.o.clock.setTimeout(() => done(), FORWARD_WAIT_MS);
    try {
      // Subscribed first: an event relayed after this read still wakes the wait.
      if ((await this.requireRun(runId)).lastSequence < 0) await started;
    } finally {
      off();
      this.o.clock.clearTimeout(t);
    }
  }

  /** A new run another process handed to this one (issue 19): taken up and started, when its lease names this one. */
  async handedOver(runId: string): Promise<void> {
    if (this.closed || this.actors.has(runId) || !this.o.ownership) return;
    if (await this.o.ownership.adopt(runId)) await this.resumeClaimed([runId]);
  }

  private async spawn(run: StoredRun, limit?: number): Promise<RunActor> {
    // One actor per run in this process, whichever path (create, resume, takeover) comes second.
    const live = this.actors.get(run.runId);
    if (live) return live;
    const fromConfig = run.configurable.recursionLimit;
    const cap =
      limit ??
      (typeof fromConfig === 'number' && fromConfig > 0
        ? Math.min(fromConfig, this.maxNodeExecutions)
        : this.maxNodeExecutions);
    const actor = new RunActor(
      {
        store: this.o.store,
        registry: this.o.registry,
        clock: this.o.clock,
        children: childRunsOf(run, {
          store: this.o.store,
          catalog: this.o.catalog,
          insert: (a) => this.insertAndStart(a),
          waitTerminal: (id) => this.waitTerminal(id),
        }),
        cancelChildren: (runId, reason) => this.cancelChildren(runId, reason),
        maxNodeExecutions: cap,
        ...deadlineOf(run, this.o.maxRunDurationMs),
        families: this.o.families ?? [],
        ...(this.o.hostId ? { hostId: this.o.hostId } : {}),
        ...(this.o.onBackgroundError ? { onBackgroundError: this.o.onBackgroundError } : {}),
        onLeaseLost: (runId) => this.stepDown(runId, 'write_refused'),
      },
      run,
    );
    this.actors.set(run.runId, actor);
    // `done` never rejects (it is only ever resolved), so this chain cannot fail unhandled.
    void actor.done.then(() => {
      this.o.ownership?.forget(run.runId);
      if (this.actors.get(run.runId) === actor) this.actors.delete(run.runId);
      this.waiters.wake(run.runId);
    });
    try {
      await actor.start();
    } catch (err) {
      // Issue 19: the lease went to another process before the first write; that process drives the run.
      if (!(err instanceof RunHalted) || this.actors.get(run.runId) === actor) throw err;
    }
    return actor;
  }

  /**
   * Stops driving `runId` here (its lease was taken over, issue 19); waits on it read the store again. Reported, so
   * the operator sees that this process was paused or cut off long enough to lose a run.
   */
  private stepDown(runId: string, detectedBy: 'write_refused' | 'renewal'): void {
    const actor = this.actors.get(runId);
    if (!actor) return;
    this.actors.delete(runId);
    actor.stepDown();
    this.waiters.wake(runId);
    this.o.onBackgroundError?.(
      new HostError(
        ErrorCode.HOST_RUN_LEASE_LOST,
        `run ${runId}: another host process holds its lease now; this one stopped driving it`,
        { runId, owner: this.o.ownership?.owner ?? null, detectedBy },
        { remediation: 'Nothing to do: the run goes on in the process that took it over.' },
      ),
    );
  }

  /** Resumes runs whose leases this process took over, from their logs (the path of a restart). */
  private async resumeClaimed(runIds: readonly string[]): Promise<void> {
    for (const runId of runIds) {
      if (this.closed || this.actors.has(runId)) continue;
      const run = await this.o.store.getRun(runId);
      if (!run || TERMINAL_STATUSES.has(run.status)) {
        this.o.ownership?.forget(runId);
        continue;
      }
      await this.spawn(run).catch((err: unknown) => this.o.onBackgroundError?.(toHostError(err)));
      // Requests sent while the run was between owners (issue 19) are applied by the process that took it over.
      await this.applyRequests(runId).catch((err: unknown) => reportUnlessLost(err, this.o.onBackgroundError));
    }
  }

  /** Another process appended to `runId` (issue 19): a wait on it here (a parent on its child) reads it again now. */
  appendedElsewhere(runId: string): void {
    this.waiters.wake(runId);
  }

  /** Resolves when `runId` is terminal (in this process or already stored so). */
  async waitTerminal(runId: string): Promise<RunStatus> {
    for (;;) {
      const r = await this.o.store.getRun(runId);
      if (!r) throw new HostError(ErrorCode.NOT_FOUND, `run ${runId} not found`, { runId });
      if (TERMINAL_STATUSES.has(r.status)) return r.status;
      const actor = this.actors.get(runId);
      if (actor) {
        const status = await Promise.race([actor.done, actor.steppedDown.then(() => undefined)]);
        if (status) return status;
        continue;
      }
      // A run driven by another process (issue 19) is read again when that process appends to it (its notification),
      // and after each lease sweep of this one (a notification missed).
      await this.waiters.next(runId);
    }
  }

  private async cancelChildren(runId: string, reason: string): Promise<void> {
    for (const child of await this.o.store.childRuns(runId)) {
      if (TERMINAL_STATUSES.has(child.status)) continue;
      await this.actors.get(child.runId)?.cancel(reason, 'system', runId);
    }
  }

  /** Resumes every run that is not terminal (host start). */
  async recover(): Promise<string[]> {
    const own = this.o.ownership;
    if (own)
      return own.start({
        claimed: (ids) => this.resumeClaimed(ids),
        lost: (runId) => this.stepDown(runId, 'renewal'),
        swept: () => {
          this.waiters.wakeAll();
          // A request whose notice was missed (or deferred) is applied here at the latest (owned: awaited on shutdown).
          const p = this.applyRequests().catch((err: unknown) => reportUnlessLost(err, this.o.onBackgroundError));
          this.sweeping.add(p);
          void p.finally(() => this.sweeping.delete(p));
        },
      });
    const resumed: string[] = [];
    for (const run of await this.o.store.activeRuns()) {
      if (this.actors.has(run.runId)) continue;
      await this.spawn(run);
      resumed.push(run.runId);
    }
    return resumed;
  }

  private async requireRun(runId: string): Promise<StoredRun> {
    const r = await this.o.store.getRun(runId);
    if (!r) throw new HostError(ErrorCode.NOT_FOUND, `run ${runId} not found`, { runId });
    return r;
  }

  /** Cancels a run. Idempotent: a run already terminal (completed, failed or cancelled) is returned as is, unchanged. */
  async cancel(runId: string, caller: Caller, reason = 'cancelled by client'): Promise<RunSnapshot> {
    const r = await this.requireRun(runId);
    if (TERMINAL_STATUSES.has(r.status)) return this.snapshot(runId);
    const actor = this.actors.get(runId);
    if (actor) {
      await actor.cancel(reason, caller.principal);
      // Waits end at once; work that cannot be abandoned (an MHS command in flight) may take longer:
      // then the snapshot says `cancelling` and the run ends when that work settles.
      await new Promise<void>((resolve) => {
        const t = this.o.clock.setTimeout(resolve, 5_000);
        // `done` never rejects.
        void actor.done.then(() => {
          this.o.clock.clearTimeout(t);
          resolve();
        });
      });
    } else if (this.forwarding) {
      await this.forwarding.cancel(runId, reason, caller.principal);
    }
    return this.snapshot(runId);
  }

  /**
   * Applies the stored requests of the runs this process drives (`runId`, or every one): each once, in the order sent
   * (issue 19; see {@link RunRequestForwarding.apply}). Without a request table (SQLite), nothing to apply.
   */
  async applyRequests(runId?: string): Promise<void> {
    await this.forwarding?.apply(runId);
  }

  /**
   * Resolves the interrupt pending at `nodeId`; raises `not_found` when none is pending there, and `interrupt_gone`
   * (410) when its run ended first with it open (interrupt-profiles.md §openwop-interrupt-cascade-cancel).
   */
  async resolveInterrupt(
    runId: string,
    nodeId: string,
    body: Record<string, unknown>,
    caller: Caller,
    /** Names one of several interrupts open at the node at once (see `resolveInterrupt` in run-interrupts.ts). */
    interruptId?: string,
  ): Promise<RunSnapshot> {
    const r = await this.requireRun(runId);
    const actor = this.actors.get(runId);
    if (!actor && TERMINAL_STATUSES.has(r.status) && (await invalidatedInterrupt(this.o.store, runId, nodeId)))
      throw new HostError(ErrorCode.INTERRUPT_INVALIDATED, `the interrupt at node ${nodeId} ended with its run`, {
        runId,
        nodeId,
        status: r.status,
      });
    if (!actor && this.forwarding && !TERMINAL_STATUSES.has(r.status)) {
      // Issue 19: driven by another process, which applies the answer.
      // Its role and name too: an MHS approval's answer needs an operator (the sender authenticated the caller).
      const by = { ...(caller.role ? { role: caller.role } : {}), ...(caller.name ? { name: caller.name } : {}) };
      await this.forwarding.forward(
        runId,
        'interrupt',
        { nodeId, body, by, ...(interruptId ? { interruptId } : {}) },
        caller.principal,
      );
      return this.snapshot(runId);
    }
    if (!actor) throw new HostError(ErrorCode.NOT_FOUND, `no pending interrupt at node ${nodeId}`, { runId, nodeId });
    await actor.resolveInterrupt(nodeId, body, caller, undefined, interruptId);
    return this.snapshot(runId);
  }

  /**
   * Sets variables of a live run (the conformance variables seam, host-sample-test-seams): validated as a whole
   * against the declared variables, then appended as `variable.changed` events with the row's bag (see
   * `RunActor.setVariables`). Raises `not_found` for an unknown run, `validation_error` for a refused write (nothing
   * written), and `conflict` for a run that is terminal, ending, or not driven by this process.
   */
  async setVariables(runId: string, values: Record<string, unknown>, caller: Caller): Promise<Record<string, unknown>> {
    const r = await this.requireRun(runId);
    if (TERMINAL_STATUSES.has(r.status) || r.status === 'cancelling')
      throw new HostError(ErrorCode.CONFLICT, `run ${runId} is ${r.status}`, { runId, status: r.status });
    checkVariableWrite(r.definition, values);
    const actor = this.actors.get(runId);
    // Issue 19: another process's actor owns the bag in memory; that process applies the write.
    if (!actor && this.forwarding) {
      const written = await this.forwarding.forward(runId, 'variables', { values }, caller.principal);
      return written as Record<string, unknown>;
    }
    if (!actor)
      throw new HostError(ErrorCode.CONFLICT, `run ${runId} is not driven by this host process`, {
        runId,
        status: r.status,
      });
    return actor.setVariables(values, caller.principal);
  }

  /**
   * Pauses (`drain-current-node`) or resumes a run this process drives (v2 runs.md §Pause and resume); the refusals of
   * `run-pause.ts`, and `conflict` for a run another process drives (its actor holds the schedule). Returns the snapshot.
   */
  async pause(runId: string, o: { reason?: string; drainPolicy: DrainPolicy }): Promise<RunSnapshot> {
    await this.localActor(await this.requireRun(runId)).pause(o);
    return this.snapshot(runId);
  }

  async resume(runId: string, reason?: string): Promise<RunSnapshot> {
    await this.localActor(await this.requireRun(runId)).resume(reason);
    return this.snapshot(runId);
  }

  private localActor(r: StoredRun): RunActor {
    const actor = this.actors.get(r.runId);
    if (actor) return actor;
    if (TERMINAL_STATUSES.has(r.status))
      throw new HostError(ErrorCode.RUN_TERMINAL, `the run is already ${r.status}`, { runStatus: r.status });
    throw new HostError(ErrorCode.CONFLICT, `run ${r.runId} is not driven by this host process`, { status: r.status });
  }

  /** Pending interrupts across the runs of this process (for the operator console). */
  pendingInterrupts(): Array<{
    runId: string;
    nodeId: string;
    kind: string;
    key: string;
    data: Record<string, unknown>;
  }> {
    const out: Array<{ runId: string; nodeId: string; kind: string; key: string; data: Record<string, unknown> }> = [];
    for (const [runId, a] of this.actors)
      for (const p of a.pending.values()) out.push({ runId, nodeId: p.nodeId, kind: p.kind, key: p.key, data: p.data });
    return out;
  }

  /** The RunSnapshot of a run (run-snapshot.schema.json); raises `not_found`. */
  async snapshot(runId: string): Promise<RunSnapshot> {
    const r = await this.requireRun(runId);
    return withChildRuns(await this.snapshots.snapshot(r), await this.o.store.childRuns(runId));
  }

  /**
   * Stops every actor without ending its run (SIGTERM): waits are released, node work that cannot be
   * abandoned gets `graceMs` to finish and be recorded. Runs resume on the next start.
   */
  async shutdown(graceMs = 10_000): Promise<void> {
    this.closed = true;
    this.o.ownership?.stopClaiming();
    await Promise.all(this.sweeping);
    await Promise.all([...this.actors.values()].map((a) => a.haltForShutdown(graceMs)));
    this.actors.clear();
    // Issue 19: the leases go at once, so the other processes resume these runs without waiting for them to lapse.
    await this.o.ownership?.close();
  }
}
