import { ErrorCode, HostError, isoAt } from '../core/index.js';
import type { Clock } from '../core/index.js';
import { resolutionEvents, resumeFromBody } from './interrupts.js';
import type { Caller } from './node-registry.js';
import type { PendingInterrupt } from './run-context.js';
import type { RunPatch } from './store.js';
import type { SettledRequest } from './run-requests.js';
import type { RunEvent, RunEventInput, RunStatus } from './types.js';

const WAITING: Record<string, RunStatus> = {
  approval: 'waiting-approval',
  'external-event': 'waiting-external',
};

/**
 * The parts of a run actor that interrupt resolution uses. `append` runs inside the actor's
 * mailbox (the caller is already in it); `enqueue` serialises after every earlier state change.
 */
export interface InterruptHost {
  readonly runId: string;
  /** Open interrupts by interrupt id (their `key`). */
  readonly pending: Map<string, PendingInterrupt>;
  readonly clock: Clock;
  /** True once the run has appended its terminal event. */
  isTerminal(): boolean;
  /** True once a cancel has been requested (the run is `cancelling`). */
  cancelRequested(): boolean;
  enqueue<T>(fn: () => Promise<T>): Promise<T>;
  historyOf(nodeId: string): RunEvent[];
  append(inputs: RunEventInput[], patch?: RunPatch, settle?: SettledRequest): Promise<RunEvent[]>;
  /** Settles a forwarded request that appends nothing (issue 19), under the run's fence. */
  settleAlone(settle: SettledRequest): Promise<void>;
}

/** The `waiting-*` status a pending interrupt of `kind` shows. */
export function waitingStatusOfKind(kind: string): RunStatus {
  return WAITING[kind] ?? 'waiting-input';
}

/** Status to show while interrupts are pending (`waiting-*`, from the first pending one), else `running`. */
export function waitingStatusOf(pending: Map<string, PendingInterrupt>): RunStatus {
  const first = pending.values().next();
  return first.done ? 'running' : waitingStatusOfKind(first.value.kind);
}

/** The interrupts open at `nodeId` (one, or `interruptId` only when named). */
export function pendingAt(
  pending: Map<string, PendingInterrupt>,
  nodeId: string,
  interruptId?: string,
): PendingInterrupt[] {
  const out: PendingInterrupt[] = [];
  for (const p of pending.values()) if (p.nodeId === nodeId && (!interruptId || p.key === interruptId)) out.push(p);
  return out;
}

/**
 * Resolves the pending interrupt at `nodeId` (REST route or console), in mailbox order; `interruptId` names one when
 * the node has several open at once (an `mhs.task` whose parallel steps both wait for an approval). Raises
 * `not_found` when the node has no pending interrupt (or not that one, or the run has ended), and `validation_error`
 * for a body its kind does not accept (see `resumeFromBody`) or when several are open and none is named (answering
 * one of two approvals by guess could approve the wrong device). An externally decided interrupt hands the body over
 * to its decider instead of recording the resolution here.
 */
export function resolveInterrupt(
  host: InterruptHost,
  nodeId: string,
  body: Record<string, unknown>,
  caller: Caller,
  /** A forwarded answer (issue 19): settled in the transaction of its resolution events. */
  requestId?: string,
  interruptId?: string,
): Promise<void> {
  const decidedBy = caller.principal;
  const settle: SettledRequest | undefined = requestId ? { requestId, status: 'applied', result: null } : undefined;
  const deadline = host.clock.now() + REREGISTER_WAIT_MS;
  const attempt = (): Promise<void> =>
    host
      .enqueue(async () => {
        const open = pendingAt(host.pending, nodeId, interruptId);
        if (open.length > 1)
          throw new HostError(
            ErrorCode.VALIDATION_ERROR,
            `${open.length} interrupts wait at node ${nodeId}: name the one to answer with interruptId`,
            { runId: host.runId, nodeId, path: 'interruptId', pending: open.map((x) => x.key) },
            { remediation: 'Read pendingInterrupts of the run and send ?interruptId=<its interruptId>.' },
          );
        const p = open[0];
        // A resumed run (restart, takeover) re-registers an open interrupt when its node re-executes, after the
        // actor started: an answer that arrives in between waits for it instead of finding nothing.
        if (!p && !host.isTerminal() && openInLog(host.historyOf(nodeId), interruptId) && host.clock.now() < deadline)
          return RETRY;
        return apply(p);
      })
      .then((r) => (r === RETRY ? pauseOn(host.clock, REREGISTER_POLL_MS).then(attempt) : undefined));
  const apply = async (p: PendingInterrupt | undefined): Promise<void> => {
    if (!p || host.isTerminal()) {
      throw new HostError(ErrorCode.NOT_FOUND, `no pending interrupt at node ${nodeId}`, {
        runId: host.runId,
        nodeId,
        ...(interruptId ? { interruptId } : {}),
      });
    }
    if (p.external) {
      // Decided elsewhere (the policy gate): hand the decision over; the node records it when it lands.
      resumeFromBody(p, body);
      await p.external(body, caller);
      if (settle) await host.settleAlone(settle);
      return;
    }
    const resumeValue = resumeFromBody(p, body);
    p.checkResume?.(resumeValue);
    const inputs = resolutionEvents({
      nodeId,
      key: p.key,
      kind: p.kind,
      resumeValue,
      decidedBy,
      at: isoAt(host.clock.now()),
      causationId: p.requestedEventId,
    });
    host.pending.delete(p.key);
    const events = await host.append(inputs, { status: waitingStatusOf(host.pending) }, settle);
    p.settle({ timedOut: false, resumeValue, decidedBy, causationId: events[0]!.eventId });
  };
  return attempt();
}

const RETRY = Symbol('retry');
/** How long an answer waits for a resumed node to re-register its open interrupt, and how often it looks. */
const REREGISTER_WAIT_MS = 5_000;
const REREGISTER_POLL_MS = 20;

/** True when the node's history has an `interrupt.requested` (that one, when named) no `interrupt.resolved` answers. */
function openInLog(history: readonly RunEvent[], interruptId?: string): boolean {
  const resolved = new Set(
    history.filter((e) => e.type === 'interrupt.resolved').map((e) => e.payload.interruptId as string),
  );
  return history.some(
    (e) =>
      e.type === 'interrupt.requested' &&
      !resolved.has(e.payload.key as string) &&
      (!interruptId || e.payload.key === interruptId),
  );
}

function pauseOn(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimeout(resolve, ms));
}

/**
 * Records the resolution of an externally decided interrupt (see `NodeContext.externalInterrupt`),
 * in mailbox order. A resolution already in the node's history, or one arriving after the run
 * ended, is ignored.
 */
export function recordResolution(
  host: InterruptHost,
  nodeId: string,
  key: string,
  resumeValue: Record<string, unknown>,
  decidedBy: string | null,
): Promise<void> {
  return host.enqueue(async () => {
    if (
      host.isTerminal() ||
      host.historyOf(nodeId).some((e) => e.type === 'interrupt.resolved' && e.payload.interruptId === key)
    )
      return;
    const p = host.pending.get(key);
    const inputs = resolutionEvents({
      nodeId,
      key,
      kind: p?.kind ?? 'approval',
      resumeValue,
      decidedBy,
      at: isoAt(host.clock.now()),
      ...(p ? { causationId: p.requestedEventId } : {}),
    });
    host.pending.delete(key);
    await host.append(inputs, { status: host.cancelRequested() ? 'cancelling' : waitingStatusOf(host.pending) });
  });
}

/**
 * Resolves the interrupt `key` at `nodeId` as timed out. Must run inside the mailbox (the interrupt
 * timer enqueues it); does nothing when that interrupt is no longer pending or the run has ended.
 */
export async function timeoutInterrupt(host: InterruptHost, nodeId: string, key: string): Promise<void> {
  const p = host.pending.get(key);
  if (!p || p.nodeId !== nodeId || host.isTerminal()) return;
  const inputs = resolutionEvents({
    nodeId,
    key,
    kind: p.kind,
    resumeValue: { action: 'timeout' },
    decidedBy: null,
    at: isoAt(host.clock.now()),
    causationId: p.requestedEventId,
    timedOut: true,
  });
  host.pending.delete(key);
  const events = await host.append(inputs, { status: waitingStatusOf(host.pending) });
  p.settle({ timedOut: true, causationId: events[0]!.eventId });
}
