import type { Context, Span } from '@opentelemetry/api';
import { SpanStatusCode } from '@opentelemetry/api';
import { ErrorCode, HostError, isoAt } from '../core/index.js';
import type { Clock } from '../core/index.js';
import { NodeFailure, RunCancelled } from './node-registry.js';
import type { Caller } from './node-registry.js';
import { RunHalted } from './run-context.js';
import type { PendingInterrupt } from './run-context.js';
import { recordResolution, resolveInterrupt, timeoutInterrupt, waitingStatusOf } from './run-interrupts.js';
import type { InterruptHost } from './run-interrupts.js';
import { cutAttempts, heldStatus, pauseEvent, resumeEvent } from './run-pause.js';
import type { DrainPolicy } from './run-pause.js';
import { recordedRunDuration } from './replay.js';
import { executeNode } from './node-execution.js';
import type { Outcome } from './node-execution.js';
import { RunJournal, runFailure } from './run-journal.js';
import { RunPosition } from './run-position.js';
import { completionEvents, nodeError, runStartedEvent, terminalEvent, variableChangedEvents } from './node-outcome.js';
import type { RunEnding } from './node-outcome.js';
import type { SettledRequest } from './run-requests.js';
import type { Db } from '../ledger/db.js';
import type { RunPatch, StoredRun } from './store.js';
import { contextFrom, startSpan } from './tracing.js';
import type { RunError, RunEvent, RunEventInput, RunStatus } from './types.js';
import type { RunActorDeps } from './run-actor-deps.js';

export type { RunActorDeps } from './run-actor-deps.js';

/**
 * One actor per run: executes the node graph, appends every transition to the run's event log and
 * folds that log to pick up where it stopped after a restart (a node with a terminal event never
 * runs again; one that was in flight resumes through its recorded history). All state changes go
 * through one mailbox, so events are appended in a single order. The events of one scheduling step commit together,
 * before the nodes it starts execute (issue 21 item 5, {@link RunJournal}).
 */
export class RunActor {
  readonly runId: string;
  readonly done: Promise<RunStatus>;
  private resolveDone!: (s: RunStatus) => void;
  /** Resolves when this process stops driving the run without ending it (its lease was taken over; issue 19). */
  readonly steppedDown: Promise<void>;
  private resolveSteppedDown!: () => void;
  private stepped = false;
  /** Where the run stands (graph state, what to decide again, node histories and causes). */
  private readonly pos: RunPosition;
  private readonly journal: RunJournal;
  /** Nodes started in this step, executed once the step's events are durable. */
  private toLaunch: Array<{ nodeId: string; resumed: boolean }> = [];
  private variables: Record<string, unknown>;
  private readonly inFlight = new Set<string>();
  /** Per in-flight node, the signal that cuts its attempt (v2 `immediate` pause). */
  private readonly cutters = new Map<string, AbortController>();
  readonly pending = new Map<string, PendingInterrupt>();
  private readonly stop = new AbortController();
  private readonly halt = new AbortController();
  private mailbox: Promise<unknown> = Promise.resolve();
  private terminal = false;
  private status: RunStatus;
  private cancelRequest: { reason: string; by: string; parentRunId?: string } | undefined;
  /** v2 `pauseRun` (drain-current-node): no node starts until `resumeRun` or a cancel. */
  private paused = false;
  private failure: { error: RunError; nodeId?: string } | undefined;
  private runTimer: ReturnType<Clock['setTimeout']> | undefined;
  private span: Span | undefined;
  private spanCtx: Context;
  /** What the interrupt resolution functions (run-interrupts.ts) see of this actor. */
  private readonly interrupts: InterruptHost;

  constructor(
    private readonly deps: RunActorDeps,
    private run: StoredRun,
  ) {
    this.runId = run.runId;
    this.pos = new RunPosition(run.definition);
    this.variables = { ...run.variables };
    this.status = run.status;
    this.spanCtx = contextFrom(run.traceparent);
    this.done = new Promise((r) => (this.resolveDone = r));
    this.steppedDown = new Promise((r) => (this.resolveSteppedDown = r));
    this.journal = new RunJournal({
      runId: this.runId,
      store: deps.store,
      clock: deps.clock,
      halt: this.halt.signal,
      ...(deps.onBackgroundError ? { onOutage: deps.onBackgroundError } : {}),
      leaseLost: () => {
        this.stepDown();
        deps.onLeaseLost?.(this.runId);
      },
    });
    this.interrupts = {
      runId: this.runId,
      pending: this.pending,
      clock: deps.clock,
      isTerminal: () => this.terminal,
      cancelRequested: () => this.cancelRequest !== undefined,
      enqueue: (fn) => this.enqueue(fn),
      historyOf: (nodeId) => this.historyOf(nodeId),
      append: (inputs, patch, settle) => this.append(inputs, patch, settle),
      settleAlone: (settle) => this.journal.fenced(() => this.deps.store.settleRequest(this.runId, settle)),
    };
  }

  /** Issue 19: the run's lease check, for a side effect journaled in a store transaction (an MHS command's intent). */
  private get runFence(): ((t: Db) => Promise<void>) | undefined {
    const fence = this.deps.store.fence;
    return fence ? (t) => fence.check(t, this.runId) : undefined;
  }

  /** Serialises `fn` after every earlier state change of this run. */
  enqueue<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.mailbox.then(fn);
    this.mailbox = p.catch(() => undefined);
    return p;
  }

  /** Starts a new run or resumes a stored one; resolves once the actor is running (not when done). */
  start(): Promise<void> {
    return this.enqueue(async () => {
      const s = startSpan('openwop.run', this.spanCtx, {
        'openwop.run_id': this.runId,
        'openwop.workflow_id': this.run.workflowId,
      });
      this.span = s.span;
      this.spanCtx = s.ctx;
      const events = await this.deps.store.events(this.runId);
      if (!events.length) {
        const [id] = this.stage([runStartedEvent(this.run, this.deps.hostId)], {
          status: 'running',
          startedAt: isoAt(this.deps.clock.now()),
        });
        this.pos.startedEventId = id!;
      } else {
        const failure = this.pos.fold(events);
        if (failure) this.failure = failure;
        this.stage([{ type: 'run.resuming', payload: { fromStatus: this.status } }]);
        for (const nodeId of this.pos.running()) if (!this.pos.cut.has(nodeId)) this.begin(nodeId, true);
      }
      this.armRunTimeout();
      this.paused = this.status === 'paused';
      if (!this.paused && this.status !== 'cancelling') this.startCut();
      if (this.status === 'cancelling') {
        this.cancelRequest = { reason: 'cancel requested before restart', by: 'system' };
        this.stop.abort();
      }
      await this.advance();
    });
  }

  /** Stages events (and a row patch) for this step's commit; returns their event ids. */
  private stage(inputs: RunEventInput[], patch: RunPatch = {}): string[] {
    if (patch.status) patch = { ...patch, status: heldStatus(this.paused && !this.cancelRequest, patch.status) };
    const ids = this.journal.stage(inputs, patch, (nodeId) => this.pos.history.get(nodeId));
    if (patch.status) this.status = patch.status;
    if (patch.variables) this.setVariablesBag(patch.variables);
    return ids;
  }

  /** Appends at once: what this step staged, then `inputs`, in one transaction; resolves when durable. */
  private async append(inputs: RunEventInput[], patch: RunPatch = {}, settle?: SettledRequest): Promise<RunEvent[]> {
    this.stage(inputs, patch);
    const events = await this.commitOrDrop(settle);
    return events.slice(events.length - inputs.length);
  }

  /** Commits this step's staged events, then executes the nodes it started (their `node.started` is durable). */
  private async commitStep(): Promise<void> {
    await this.commitOrDrop();
    const launch = this.toLaunch;
    this.toLaunch = [];
    for (const l of launch) {
      if (!this.halt.signal.aborted) this.launch(l.nodeId, l.resumed);
      else this.unbegin(l.nodeId); // resumes from its durable `node.started` when the run does
    }
  }

  /** Commits what is staged; when that fails, the nodes this step started are not executed (their start is lost). */
  private async commitOrDrop(settle?: SettledRequest): Promise<RunEvent[]> {
    try {
      return await this.journal.commit(settle);
    } catch (err) {
      for (const l of this.toLaunch.splice(0)) this.unbegin(l.nodeId);
      throw err;
    }
  }

  private setVariablesBag(next: Record<string, unknown>): void {
    this.variables = next;
    this.pos.schedule.variablesChanged();
  }

  /**
   * Stops driving the run without ending it or writing anything (another process holds its lease): waits are
   * released, timers cleared, node work still in flight finds the halt and records nothing.
   */
  stepDown(): void {
    if (this.terminal || this.stepped) return;
    this.stepped = true;
    this.halt.abort();
    if (this.runTimer) this.deps.clock.clearTimeout(this.runTimer);
    this.span?.end();
    this.resolveSteppedDown();
  }

  /**
   * Owns a promise this actor starts and nobody awaits (issue 16): a rejection is reported with its code, never
   * left unhandled; a halt (host shutdown) is not a failure.
   */
  supervise(p: Promise<unknown>, what: string): void {
    p.catch((err: unknown) => {
      if (err instanceof RunHalted || this.halt.signal.aborted) return;
      this.deps.onBackgroundError?.(runFailure(err, this.runId, what));
    });
  }

  /** Appends node-scoped events from an executor, in mailbox order. */
  appendForNode(nodeId: string, inputs: RunEventInput[], patch: RunPatch = {}): Promise<RunEvent[]> {
    return this.enqueue(() =>
      this.append(
        inputs.map((i) => ({ ...i, nodeId })),
        patch,
      ),
    );
  }

  historyOf(nodeId: string): RunEvent[] {
    return this.pos.historyOf(nodeId);
  }

  /** Status to show while interrupts are pending (`waiting-*`), else `running`. */
  waitingStatus(): RunStatus {
    return waitingStatusOf(this.pending);
  }

  get currentStatus(): RunStatus {
    return this.status;
  }

  private stopping(): boolean {
    return this.cancelRequest !== undefined || this.failure !== undefined;
  }

  /**
   * Starts, skips and finishes as the graph allows, deciding only the nodes a change may affect (issue 21 item 5);
   * the step's events are committed together, then the nodes it started execute. Runs inside the mailbox.
   */
  private async advance(): Promise<void> {
    if (this.terminal || this.halt.signal.aborted) return this.commitStep();
    if (!this.stopping() && !this.paused) {
      const { schedule } = this.pos;
      schedule.restart();
      for (let nodeId = schedule.take(); nodeId !== undefined; nodeId = schedule.take()) {
        const d = this.pos.decide(nodeId, this.variables);
        if (d === 'wait') continue;
        const node = this.pos.node(nodeId);
        if (d === 'skip') {
          const [id] = this.stage([
            {
              type: 'node.skipped',
              nodeId,
              payload: { nodeId, reason: node.disabled ? 'disabled' : 'no incoming edge fired' },
            },
          ]);
          this.pos.skipped(nodeId, id!);
          continue;
        }
        if (this.pos.executions >= this.deps.maxNodeExecutions) {
          schedule.mark(nodeId);
          // Committed before the failure acts (child runs are cancelled on it).
          await this.append([
            {
              type: 'cap.breached',
              nodeId,
              payload: {
                kind: 'node-executions',
                limit: this.deps.maxNodeExecutions,
                observed: this.pos.executions + 1,
                nodeId,
              },
            },
          ]);
          this.fail(
            { code: 'recursion_limit_exceeded', message: `more than ${this.deps.maxNodeExecutions} node executions` },
            nodeId,
          );
          break;
        }
        this.startNode(nodeId, node.typeId);
      }
    }
    if (this.inFlight.size) return this.commitStep();
    if (this.cancelRequest) return this.finish('cancelled');
    if (this.failure) return this.finish('failed');
    if (this.paused) return this.commitStep();
    const unhandled = this.pos.unhandledFailure();
    if (unhandled) {
      this.failure = unhandled;
      return this.finish('failed');
    }
    return this.finish('completed');
  }

  /** Stages `node.started` and a fresh attempt of `nodeId` (its history begins anew), executed after the commit. */
  private startNode(nodeId: string, typeId: string): void {
    const [id] = this.stage([
      {
        type: 'node.started',
        nodeId,
        causationId: this.pos.causationFor(nodeId),
        payload: { nodeId, typeId, attempt: 0 },
      },
    ]);
    this.pos.started(nodeId, id!);
    this.begin(nodeId, false);
  }

  /** Begins afresh every attempt an `immediate` pause cut (v2 runs.md: the resumed run's `node.started`). */
  private startCut(): void {
    for (const nodeId of [...this.pos.cut]) {
      if (this.inFlight.has(nodeId)) continue; // the cut attempt has not returned yet: started when it does
      this.pos.cut.delete(nodeId);
      this.startNode(nodeId, this.pos.node(nodeId).typeId);
    }
  }

  private fail(error: RunError, nodeId?: string): void {
    if (this.stopping()) return;
    this.failure = nodeId ? { error, nodeId } : { error };
    this.stop.abort();
    this.supervise(this.deps.cancelChildren(this.runId, 'parent-failed'), 'cancel child runs');
  }

  /** `nodeId` is in flight from now; it executes at the end of this step ({@link commitStep}). */
  private begin(nodeId: string, resumed: boolean): void {
    this.inFlight.add(nodeId);
    this.cutters.set(nodeId, new AbortController());
    this.toLaunch.push({ nodeId, resumed });
  }

  private unbegin(nodeId: string): void {
    this.inFlight.delete(nodeId);
    this.cutters.delete(nodeId);
  }

  private launch(nodeId: string, resumed: boolean): void {
    const outputs = this.pos.outputs.borrow();
    this.supervise(
      this.execute(nodeId, resumed, outputs).then((outcome) =>
        this.enqueue(() => {
          this.pos.outputs.release(outputs);
          return this.onNodeDone(nodeId, outcome);
        }),
      ),
      `node ${nodeId}`,
    );
  }

  private execute(
    nodeId: string,
    resumed: boolean,
    nodeOutputs: Record<string, Record<string, unknown> | undefined>,
  ): Promise<Outcome> {
    return executeNode({
      host: this,
      run: this.run,
      node: this.pos.node(nodeId),
      activation: this.pos.activation(nodeId),
      nodeOutputs,
      variables: this.variables,
      resumed,
      clock: this.deps.clock,
      stop: AbortSignal.any([this.stop.signal, this.cutters.get(nodeId)!.signal]),
      halt: this.halt.signal,
      spanCtx: this.spanCtx,
      children: this.deps.children,
      registry: this.deps.registry,
      families: this.deps.families ?? [],
      runFence: this.runFence,
    });
  }

  private async onNodeDone(nodeId: string, outcome: Outcome): Promise<void> {
    this.inFlight.delete(nodeId);
    this.cutters.delete(nodeId);
    if (this.terminal) return;
    if (!outcome.ok && (outcome.error instanceof RunHalted || this.halt.signal.aborted)) return; // resumes after restart
    if (this.pos.cut.has(nodeId)) {
      // A cut attempt records no terminal event; resumed before it returned, it begins afresh now.
      if (!this.paused && !this.stopping()) this.startCut();
      return this.advance();
    }
    const causationId = this.pos.terminalCausation(nodeId);
    if (outcome.ok) {
      const changed = outcome.result.variables ?? {};
      const inputs = completionEvents(nodeId, outcome.result, this.variables, causationId);
      const next = { ...this.variables, ...changed };
      const ids = this.stage(inputs, Object.keys(changed).length ? { variables: next } : {});
      this.pos.ended(nodeId, ids[ids.length - 1]!, {
        status: 'completed',
        outputs: outcome.result.outputs ?? {},
        exitLoop: outcome.result.exitLoop === true,
      });
    } else if (
      this.stopping() &&
      (outcome.error instanceof RunCancelled || !(outcome.error instanceof NodeFailure) || this.stop.signal.aborted)
    ) {
      const [id] = this.stage([
        {
          type: 'node.cancelled',
          nodeId,
          causationId,
          payload: { nodeId, reason: this.cancelRequest?.reason ?? 'run stopping' },
        },
      ]);
      this.pos.ended(nodeId, id!, { status: 'cancelled' });
    } else {
      const err = outcome.error;
      const error = nodeError(err);
      const info = err instanceof NodeFailure ? err.failedInfo : {};
      // Committed before the failure acts (an unhandled one cancels the child runs).
      const [e] = await this.append([
        { type: 'node.failed', nodeId, causationId, payload: { ...info, nodeId, error, attempts: 1 } },
      ]);
      this.pos.ended(nodeId, e!.eventId, { status: 'failed', error });
      if (!this.pos.graph.failureHandled(nodeId)) this.fail(error, nodeId);
    }
    await this.advance();
  }

  private async finish(status: 'completed' | 'failed' | 'cancelled'): Promise<void> {
    if (this.terminal) return;
    const now = this.deps.clock.now();
    const durationMs =
      (await recordedRunDuration(this.deps.store, this.run.metadata, status)) ??
      Math.max(0, now - Date.parse(this.run.startedAt ?? this.run.createdAt));
    const patch: RunPatch = { status, completedAt: isoAt(now) };
    let end: RunEnding;
    if (status === 'completed') {
      end = { status, outputs: this.pos.sinkOutputs() };
    } else if (status === 'failed') {
      patch.error = this.failure!.error;
      end = { status, ...this.failure! };
    } else {
      end = { status, ...this.cancelRequest! };
    }
    const input = terminalEvent(end, durationMs);
    // The terminal event commits with the rest of this step (e.g. the last node's completion).
    await this.append([input], patch);
    this.terminal = true;
    if (this.runTimer) this.deps.clock.clearTimeout(this.runTimer);
    this.span?.setStatus({ code: status === 'completed' ? SpanStatusCode.OK : SpanStatusCode.ERROR });
    this.span?.end();
    this.resolveDone(status);
  }

  /**
   * Arms the run's wall-clock deadline (RFC 0058): once it has passed — observed strictly greater than the limit
   * (capabilities.md §"Engine-enforced limits") — one `cap.breached {kind: 'run-duration'}` and the run fails
   * `run_timeout`, naming the bound that set it.
   */
  private armRunTimeout(): void {
    const deadline = this.deps.runDeadline;
    if (!deadline) return;
    const { limitMs: limit, source } = deadline;
    const startedAt = Date.parse(this.run.startedAt ?? isoAt(this.deps.clock.now()));
    const arm = (): void => {
      this.runTimer = this.deps.clock.setTimeout(
        () =>
          this.supervise(
            this.enqueue(async () => {
              if (this.terminal || this.stopping()) return;
              const observed = this.deps.clock.now() - startedAt;
              if (observed <= limit) return arm();
              await this.append([{ type: 'cap.breached', payload: { kind: 'run-duration', limit, observed } }]);
              this.fail({
                code: 'run_timeout',
                message: `run exceeded ${source} ${limit} ms (ran ${observed} ms)`,
                details: { limit, observed, source },
              });
              await this.advance();
            }),
            'run timeout',
          ),
        Math.max(0, startedAt + limit + 1 - this.deps.clock.now()),
      );
    };
    arm();
  }

  /** Cancels the run: in-flight waits stop, child runs are cancelled, then `run.cancelled` is appended. */
  cancel(reason: string, by: string, parentRunId?: string, requestId?: string): Promise<void> {
    return this.enqueue(async () => {
      // A forwarded cancel (issue 19) is settled with the `cancelling` it records, or alone when there is nothing to do.
      const settle: SettledRequest | undefined = requestId ? { requestId, status: 'applied', result: null } : undefined;
      if (this.terminal) {
        if (settle) await this.deps.store.requests?.closeEnded(this.runId, settle);
        return;
      }
      if (this.cancelRequest) {
        if (settle) await this.journal.fenced(() => this.deps.store.settleRequest(this.runId, settle));
        return;
      }
      this.cancelRequest = parentRunId ? { reason, by, parentRunId } : { reason, by };
      if (this.failure) this.failure = undefined;
      await this.journal.fenced(() => this.deps.store.patchRun(this.runId, { status: 'cancelling' }, settle));
      this.status = 'cancelling';
      this.stop.abort();
      await this.deps.cancelChildren(this.runId, 'parent-cancelled');
      await this.advance();
    });
  }

  /**
   * Pauses the run (v2 runs.md §Pause and resume): `run.paused`, status `paused`. `drain-current-node` lets the
   * in-flight nodes reach a terminal; `immediate` cuts each in-flight attempt, refused while one is not a pure node.
   */
  pause(o: { reason?: string; drainPolicy: DrainPolicy }): Promise<void> {
    return this.enqueue(async () => {
      const cut =
        o.drainPolicy === 'immediate' && !this.terminal && !this.stopping() && this.status !== 'paused'
          ? cutAttempts(
              this.status,
              this.inFlight,
              (id) => this.pos.node(id),
              this.deps.registry,
              (id) => this.pos.activation(id),
            )
          : [];
      await this.append([pauseEvent(this.status, this.terminal || this.stopping(), o, cut)], { status: 'paused' });
      this.paused = true;
      for (const c of cut) {
        this.pos.cut.add(c.nodeId);
        this.cutters.get(c.nodeId)?.abort();
      }
    });
  }

  /** Resumes a paused run: `run.resumed`, the status its pending interrupts give, and scheduling goes on. */
  resume(reason?: string): Promise<void> {
    return this.enqueue(async () => {
      const e = resumeEvent(this.status, reason);
      this.paused = false;
      await this.append([e], { status: this.waitingStatus() });
      this.startCut();
      await this.advance();
    });
  }

  /**
   * Sets variables from outside the graph (variables test seam): `variable.changed` events and the row's bag in one
   * append, in mailbox order. Running nodes keep the bag they started with. `conflict` once the run is ending.
   */
  setVariables(
    values: Record<string, unknown>,
    changedBy: string,
    requestId?: string,
  ): Promise<Record<string, unknown>> {
    return this.enqueue(async () => {
      const { runId, status } = this;
      if (this.terminal || this.stopping())
        throw new HostError(ErrorCode.CONFLICT, 'the run is ending', { runId, status });
      const next = { ...this.variables, ...values };
      const events = variableChangedEvents(values, this.variables, { source: 'test-seam', changedBy });
      // A forwarded write (issue 19) is settled with its events, its answer the new bag.
      await this.append(
        events,
        { variables: next },
        requestId ? { requestId, status: 'applied', result: next } : undefined,
      );
      return next;
    });
  }

  /**
   * Resolves the pending interrupt at `nodeId` (REST route or console). Raises `not_found` when the
   * node has no pending interrupt and `validation_error` for a body its kind does not accept.
   */
  resolveInterrupt(
    nodeId: string,
    body: Record<string, unknown>,
    caller: Caller,
    requestId?: string,
    interruptId?: string,
  ): Promise<void> {
    return resolveInterrupt(this.interrupts, nodeId, body, caller, requestId, interruptId);
  }

  /** Records the resolution of an externally decided interrupt (see `NodeContext.externalInterrupt`). */
  recordResolution(
    nodeId: string,
    key: string,
    resumeValue: Record<string, unknown>,
    decidedBy: string | null,
  ): Promise<void> {
    return recordResolution(this.interrupts, nodeId, key, resumeValue, decidedBy);
  }

  /** Called by the interrupt timer (mailbox): resolves the interrupt as timed out. */
  timeoutInterrupt(nodeId: string, key: string): Promise<void> {
    return timeoutInterrupt(this.interrupts, nodeId, key);
  }

  /**
   * Stops this actor without ending the run (host shutdown): waits are released without events,
   * while node work that cannot be abandoned (an MHS command in flight) finishes and is recorded.
   * The run resumes from its log when the host starts again.
   */
  async haltForShutdown(graceMs: number): Promise<void> {
    if (this.terminal) return;
    this.halt.abort();
    if (this.runTimer) this.deps.clock.clearTimeout(this.runTimer);
    const deadline = this.deps.clock.now() + graceMs;
    while (this.inFlight.size && this.deps.clock.now() < deadline) {
      await new Promise<void>((r) => this.deps.clock.setTimeout(r, 20));
    }
    await this.mailbox;
    this.span?.end();
  }

  get isTerminal(): boolean {
    return this.terminal;
  }
}
