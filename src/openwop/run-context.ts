import type { Db } from '../ledger/db.js';
import type { Clock } from '../core/index.js';
import { RunCancelled } from './node-registry.js';
import type { Caller, ChildRuns, InterruptOutcome, InterruptRequest, NodeContext } from './node-registry.js';
import type { RunPatch } from './store.js';
import type { RunEvent, RunEventInput, RunStatus, WorkflowDefinition, WorkflowNode } from './types.js';

/** Thrown into waits when the host shuts down: the node resumes after restart, nothing is recorded. */
export class RunHalted extends Error {
  override readonly name = 'RunHalted';
}

/** An interrupt waiting for its resolution. */
export interface PendingInterrupt {
  /** The node that asked; a node may have several interrupts open at once (an `mhs.task`'s parallel steps). */
  nodeId: string;
  key: string;
  kind: InterruptRequest['kind'];
  data: Record<string, unknown>;
  resumeSchema?: Record<string, unknown>;
  /** See `InterruptRequest.checkResume`. */
  checkResume?: InterruptRequest['checkResume'];
  requestedEventId: string;
  settle(outcome: InterruptOutcome): void;
  /** Set for waits decided elsewhere: the REST resolution is handed over instead of settling here. */
  external?: (body: Record<string, unknown>, by: Caller) => Promise<void>;
}

/** The parts of the run actor a node context uses. */
export interface ContextHost {
  /** Open interrupts by interrupt id (their `key`). */
  readonly pending: Map<string, PendingInterrupt>;
  appendForNode(nodeId: string, inputs: RunEventInput[], patch?: RunPatch): Promise<RunEvent[]>;
  historyOf(nodeId: string): RunEvent[];
  enqueue<T>(fn: () => Promise<T>): Promise<T>;
  /** Appends the resolution of an interrupt (mailbox order) and drops it from the pending set. */
  recordResolution(
    nodeId: string,
    key: string,
    resumeValue: Record<string, unknown>,
    decidedBy: string | null,
  ): Promise<void>;
  timeoutInterrupt(nodeId: string, key: string): Promise<void>;
  waitingStatus(): RunStatus;
  /** Owns a promise nobody awaits: its rejection is reported, never left unhandled (issue 16). */
  supervise(p: Promise<unknown>, what: string): void;
}

interface ContextOptions {
  runId: string;
  node: WorkflowNode;
  activation: number;
  inputs: Record<string, unknown>;
  variables: Record<string, unknown>;
  resumed: boolean;
  clock: Clock;
  stop: AbortSignal;
  halt: AbortSignal;
  traceparent: string | undefined;
  children: ChildRuns;
  runFence?: ((t: Db) => Promise<void>) | undefined;
  nodeOutputs?: Record<string, Record<string, unknown> | undefined>;
  configurable?: Record<string, unknown>;
  /** The run's workflow definition (for run-scoped defaults such as `defaults.promptRefs`). */
  workflow?: WorkflowDefinition;
}

const WAITING: Record<string, RunStatus> = { approval: 'waiting-approval', 'external-event': 'waiting-external' };

const V1_KINDS = new Set(['approval', 'clarification', 'external-event', 'custom']);

/** `{kind}` for the kinds the v1 `node.suspended` / `interrupt.resolved` payload enum lists; `{}` for newer ones. */
export function v1Kind(kind: string): { kind?: string } {
  return V1_KINDS.has(kind) ? { kind } : {};
}

/** Rejects when either signal aborts (cancel → RunCancelled, shutdown → RunHalted). */
function interruptible<T>(o: ContextOptions, work: (onAbort: (fn: () => void) => void) => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const cleanups: Array<() => void> = [];
    const done = (): void => {
      o.stop.removeEventListener('abort', onStop);
      o.halt.removeEventListener('abort', onHalt);
      for (const c of cleanups) c();
    };
    const onStop = (): void => {
      done();
      reject(new RunCancelled('run cancelled'));
    };
    const onHalt = (): void => {
      done();
      reject(new RunHalted('host shutting down'));
    };
    if (o.halt.aborted) return onHalt();
    if (o.stop.aborted) return onStop();
    o.stop.addEventListener('abort', onStop);
    o.halt.addEventListener('abort', onHalt);
    work((fn) => cleanups.push(fn)).then(
      (v) => {
        done();
        resolve(v);
      },
      (e: unknown) => {
        done();
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

/** Builds the `NodeContext` of one execution; checkpoints, sleeps and interrupts are durable. */
export function buildNodeContext(host: ContextHost, o: ContextOptions): NodeContext {
  const nodeId = o.node.id;
  let sleeps = 0;
  let interrupts = 0;
  const recall = (name: string): { found: boolean; value: unknown } => {
    for (const e of host.historyOf(nodeId)) {
      const f = e.payload.fields as { checkpoint?: string; value?: unknown } | undefined;
      if (e.type === 'log.appended' && f?.checkpoint === name) return { found: true, value: f.value };
    }
    return { found: false, value: undefined };
  };
  const ctx: NodeContext = {
    runId: o.runId,
    node: o.node,
    activation: o.activation,
    inputs: o.inputs,
    variables: o.variables,
    resumed: o.resumed,
    get history() {
      return host.historyOf(nodeId);
    },
    signal: o.stop,
    ...(o.runFence ? { runFence: o.runFence } : {}),
    clock: o.clock,
    traceparent: o.traceparent,
    nodeOutputs: o.nodeOutputs ?? {},
    configurable: o.configurable ?? {},
    ...(o.workflow ? { workflow: o.workflow } : {}),
    children: {
      start: (opts) => o.children.start(opts),
      settled: (runId) => interruptible(o, () => o.children.settled(runId)),
    },
    emit: (events) => host.appendForNode(nodeId, events),
    async checkpoint<T>(name: string, value: () => T): Promise<T> {
      const prior = recall(name);
      if (prior.found) return prior.value as T;
      const v = value();
      await host.appendForNode(nodeId, [
        {
          type: 'log.appended',
          payload: { level: 'debug', message: `checkpoint ${name}`, nodeId, fields: { checkpoint: name, value: v } },
        },
      ]);
      return v;
    },
    async sleep(this: NodeContext, ms: number) {
      // `this`: a wrapper's checkpoint (a replay's recorded due time) applies to the sleep too.
      const dueAt = await this.checkpoint(`sleep:${sleeps++}`, () => o.clock.now() + ms);
      await interruptible(
        o,
        (onAbort) =>
          new Promise<void>((resolve) => {
            const h = o.clock.setTimeout(resolve, Math.max(0, dueAt - o.clock.now()));
            onAbort(() => o.clock.clearTimeout(h));
          }),
      );
    },
    async externalInterrupt(req, onResolve) {
      const hist = host.historyOf(nodeId);
      let requested = hist.find((e) => e.type === 'interrupt.requested' && e.payload.key === req.key);
      if (!requested) {
        const payload: Record<string, unknown> = { kind: req.kind, key: req.key, data: req.data };
        const events = await host.appendForNode(
          nodeId,
          [
            {
              type: 'node.suspended',
              payload: { ...req.suspendInfo, nodeId, interruptId: req.key, kind: req.kind, key: req.key },
            },
            { type: 'interrupt.requested', payload },
          ],
          { status: WAITING[req.kind] ?? 'waiting-input' },
        );
        requested = events[1]!;
      }
      if (!hist.some((e) => e.type === 'interrupt.resolved' && e.payload.interruptId === req.key)) {
        host.pending.set(req.key, {
          nodeId,
          key: req.key,
          kind: req.kind,
          data: req.data,
          requestedEventId: requested.eventId,
          settle: () => undefined,
          external: onResolve,
        });
      }
      return {
        settled: (resumeValue, decidedBy) => host.recordResolution(nodeId, req.key, resumeValue, decidedBy),
      };
    },
    async interrupt(req) {
      const key = `${o.runId}:${nodeId}:${o.activation}:${interrupts++}`;
      const hist = host.historyOf(nodeId);
      const resolved = hist.find((e) => e.type === 'interrupt.resolved' && e.payload.interruptId === key);
      if (resolved) {
        return resolved.payload.timedOut === true
          ? { timedOut: true, causationId: resolved.eventId }
          : {
              timedOut: false,
              resumeValue: (resolved.payload.resumeValue ?? {}) as Record<string, unknown>,
              decidedBy: (resolved.payload.decidedBy as string | undefined) ?? null,
              causationId: resolved.eventId,
            };
      }
      let requested = hist.find((e) => e.type === 'interrupt.requested' && e.payload.key === key);
      if (!requested) {
        const payload: Record<string, unknown> = { kind: req.kind, key, data: req.data };
        if (req.timeoutMs !== undefined) payload.timeoutMs = req.timeoutMs;
        if (req.resumeSchema) payload.resumeSchema = req.resumeSchema;
        const events = await host.appendForNode(
          nodeId,
          [
            {
              type: 'node.suspended',
              payload: { ...req.suspendInfo, nodeId, interruptId: key, ...v1Kind(req.kind), key },
            },
            { type: 'interrupt.requested', payload },
          ],
          { status: WAITING[req.kind] ?? 'waiting-input' },
        );
        requested = events[1]!;
      }
      const requestedAt = Date.parse(requested.timestamp);
      const requestedEventId = requested.eventId;
      return interruptible(
        o,
        (onAbort) =>
          new Promise<InterruptOutcome>((resolve) => {
            const p: PendingInterrupt = {
              nodeId,
              key,
              kind: req.kind,
              data: req.data,
              requestedEventId,
              settle: resolve,
            };
            if (req.resumeSchema) p.resumeSchema = req.resumeSchema;
            if (req.checkResume) p.checkResume = req.checkResume;
            host.pending.set(key, p);
            let timer: ReturnType<Clock['setTimeout']> | undefined;
            if (req.timeoutMs !== undefined) {
              timer = o.clock.setTimeout(
                () =>
                  host.supervise(
                    host.enqueue(() => host.timeoutInterrupt(nodeId, key)),
                    `interrupt timeout ${nodeId}`,
                  ),
                Math.max(0, requestedAt + req.timeoutMs - o.clock.now()),
              );
            }
            onAbort(() => {
              if (timer) o.clock.clearTimeout(timer);
              if (host.pending.get(key) === p) host.pending.delete(key);
            });
          }),
      );
    },
  };
  return ctx;
}
