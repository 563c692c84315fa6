import { ErrorCode, HostError, toHostError } from '../core/index.js';
import type { Clock } from '../core/index.js';
import type { Caller } from './node-registry.js';
import type { RunActor } from './run-actor.js';
import { RunHalted } from './run-context.js';
import { pendingAt } from './run-interrupts.js';
import { requestError } from './run-requests.js';
import type { RunRequest, RunRequests } from './run-requests.js';
import type { OpenwopStore, StoredRun } from './store.js';
import { TERMINAL_EVENT_TYPES, TERMINAL_STATUSES } from './types.js';
import { checkVariableWrite } from './variable-write.js';

/** How long a forwarded request's sender waits for the owner (as a local cancel waits for its run to end). */
export const FORWARD_WAIT_MS = 5_000;

/** Options of {@link RunRequestForwarding}. */
export interface RunRequestForwardingOptions {
  store: OpenwopStore;
  requests: RunRequests;
  clock: Clock;
  /** The run actors of this process, by run id (the RunManager's own map: read, never written here). */
  actors: ReadonlyMap<string, RunActor>;
  /** True once this process is shutting down: no request is applied then. */
  closed: () => boolean;
  onBackgroundError?: (err: HostError) => void;
}

/** Reports a background failure, except a lost lease (the run goes on in the process that took it over, issue 19). */
export function reportUnlessLost(err: unknown, report?: (err: HostError) => void): void {
  const e = toHostError(err);
  if (e.code !== ErrorCode.HOST_RUN_LEASE_LOST) report?.(e);
}

/** True when `nodeId` asked an interrupt that its run ended without resolving (cancelled or failed meanwhile). */
export async function invalidatedInterrupt(store: OpenwopStore, runId: string, nodeId: string): Promise<boolean> {
  const events = await store.events(runId);
  const asked = events.filter((e) => e.type === 'interrupt.requested' && e.nodeId === nodeId);
  const resolved = new Set(
    events.filter((e) => e.type === 'interrupt.resolved').map((e) => e.payload.interruptId as string),
  );
  return asked.some((e) => !resolved.has(e.payload.key as string));
}

/**
 * Requests (cancel, interrupt answer, variable write) of runs another host process drives (issue 19, `run_requests`):
 * sent and awaited for the caller here, and applied by the process that drives the run.
 */
export class RunRequestForwarding {
  /** Forwarded requests being applied here (a notice and a sweep may name the same one). */
  private readonly applying = new Set<string>();

  constructor(private readonly o: RunRequestForwardingOptions) {}

  /**
   * Stores the cancel for the owner (issue 19) and waits, as a local cancel does (up to 5 s), for the relayed terminal
   * event; a cancel the owner has not applied by then stays stored and is applied by it, or by whichever process
   * takes the run over.
   */
  async cancel(runId: string, reason: string, principal: string): Promise<void> {
    let off: (() => void) | undefined;
    let t: ReturnType<Clock['setTimeout']> | undefined;
    try {
      const ended = new Promise<void>((resolve) => {
        off = this.o.store.subscribe(runId, (e) => {
          if (TERMINAL_EVENT_TYPES.has(e.type)) resolve();
        });
        t = this.o.clock.setTimeout(resolve, FORWARD_WAIT_MS);
      });
      const req = await this.o.requests.send(runId, 'cancel', { reason }, principal, FORWARD_WAIT_MS);
      if (req.status === 'pending') await this.closeIfEnded(req, null);
      const r = await this.requireRun(runId);
      if (!TERMINAL_STATUSES.has(r.status)) await ended;
    } finally {
      off?.();
      if (t) this.o.clock.clearTimeout(t);
    }
  }

  /**
   * A request still pending when its run is already terminal can never be applied: closed (as a local request on an
   * ended run is answered) so no process tries later. Returns the request as it ended.
   */
  private async closeIfEnded(req: RunRequest, result: unknown): Promise<RunRequest> {
    const r = await this.requireRun(req.runId);
    if (!TERMINAL_STATUSES.has(r.status)) return req;
    await this.o.requests.closeEnded(req.runId, { requestId: req.requestId, status: 'applied', result });
    return (await this.o.requests.get(req.requestId)) ?? req;
  }

  /**
   * Sends an interrupt answer or a variable write to the process that drives the run and waits (up to 5 s) for it to be
   * applied: the answer is what that process answered (its error, raised again here). Not applied in time (the owner
   * died and no process took the run over yet): `MHS.HOST.RUN_REQUEST_PENDING`; the request stays stored and is applied
   * by the next owner.
   */
  async forward(
    runId: string,
    kind: 'interrupt' | 'variables',
    body: Record<string, unknown>,
    principal: string,
  ): Promise<unknown> {
    let req = await this.o.requests.send(runId, kind, body, principal, FORWARD_WAIT_MS);
    const r = await this.requireRun(runId);
    if (req.status === 'pending' && TERMINAL_STATUSES.has(r.status)) {
      // The run ended before any owner applied it: closed with what a local request on an ended run answers.
      const nodeId = String(body.nodeId);
      const e =
        kind !== 'interrupt'
          ? new HostError(ErrorCode.CONFLICT, `run ${runId} is ${r.status}`, { runId, status: r.status })
          : (await invalidatedInterrupt(this.o.store, runId, nodeId))
            ? new HostError(ErrorCode.INTERRUPT_INVALIDATED, `the interrupt at node ${nodeId} ended with its run`, {
                runId,
                nodeId,
                status: r.status,
              })
            : new HostError(ErrorCode.NOT_FOUND, `no pending interrupt at node ${nodeId}`, { runId, nodeId });
      const settle = {
        requestId: req.requestId,
        status: 'failed' as const,
        result: { code: e.code, message: e.message, details: e.details },
      };
      await this.o.requests.closeEnded(runId, settle);
      req = (await this.o.requests.get(req.requestId)) ?? req;
    }
    if (req.status === 'failed') throw requestError(req.result);
    if (req.status === 'applied') return req.result;
    throw new HostError(
      ErrorCode.HOST_RUN_REQUEST_PENDING,
      `run ${runId} is driven by another host process that has not applied the request yet`,
      { runId, requestId: req.requestId, kind },
      { remediation: 'Read the run: the request is stored and applied by the process that drives (or takes over) it.' },
    );
  }

  /**
   * Applies the stored requests of the runs this process drives (`runId`, or every one): each once, in the order sent,
   * settled in the transaction of the events it appends (issue 19). A request this process can no longer apply (its
   * lease was lost, the store is out) stays pending for the next owner or the next sweep.
   */
  async apply(runId?: string): Promise<void> {
    if (this.o.closed()) return;
    const actors = this.o.actors;
    const runIds = runId === undefined ? [...actors.keys()] : actors.has(runId) ? [runId] : [];
    for (const req of await this.o.requests.pending(runIds)) {
      if (this.applying.has(req.requestId)) continue;
      this.applying.add(req.requestId);
      try {
        await this.applyRequest(req);
      } finally {
        this.applying.delete(req.requestId);
      }
    }
  }

  private async applyRequest(req: RunRequest): Promise<void> {
    const actor = this.o.actors.get(req.runId);
    if (!actor) return;
    const by = (req.body.by ?? {}) as Pick<Caller, 'role' | 'name'>;
    const caller: Caller = {
      principal: req.principal,
      ...(by.role === 'operator' || by.role === 'client' ? { role: by.role } : {}),
      ...(typeof by.name === 'string' ? { name: by.name } : {}),
    };
    try {
      if (req.kind === 'cancel') {
        const reason = typeof req.body.reason === 'string' ? req.body.reason : 'cancelled by client';
        await actor.cancel(reason, req.principal, undefined, req.requestId);
      } else if (req.kind === 'interrupt') {
        const nodeId = String(req.body.nodeId);
        const interruptId = typeof req.body.interruptId === 'string' ? req.body.interruptId : undefined;
        // A run just resumed asks its open interrupt again shortly: until then the answer waits (next sweep).
        if (
          !pendingAt(actor.pending, nodeId, interruptId).length &&
          (await this.openInterrupt(req.runId, nodeId, interruptId))
        )
          return;
        const body = (req.body.body ?? {}) as Record<string, unknown>;
        await actor.resolveInterrupt(nodeId, body, caller, req.requestId, interruptId);
      } else {
        const values = (req.body.values ?? {}) as Record<string, unknown>;
        checkVariableWrite((await this.requireRun(req.runId)).definition, values);
        await actor.setVariables(values, req.principal, req.requestId);
      }
    } catch (err) {
      if (err instanceof RunHalted) return;
      const e = toHostError(err);
      if (e.code === ErrorCode.HOST_RUN_LEASE_LOST || e.code === ErrorCode.HOST_LEDGER_UNAVAILABLE) return;
      // Refused as a local request would be (not_found, validation_error, conflict): the sender raises the same error.
      const settle = {
        requestId: req.requestId,
        status: 'failed' as const,
        result: { code: e.code, message: e.message, details: e.details },
      };
      if (actor.isTerminal) await this.o.requests.closeEnded(req.runId, settle);
      else
        await this.o.store
          .settleRequest(req.runId, settle)
          .catch((x: unknown) => reportUnlessLost(x, this.o.onBackgroundError));
    }
  }

  /** True when `nodeId`'s log holds an interrupt request (that one, when named) not resolved yet. */
  private async openInterrupt(runId: string, nodeId: string, interruptId?: string): Promise<boolean> {
    const events = await this.o.store.events(runId);
    const resolved = new Set(
      events.filter((e) => e.type === 'interrupt.resolved').map((e) => e.payload.interruptId as string),
    );
    return events.some(
      (e) =>
        e.type === 'interrupt.requested' &&
        e.nodeId === nodeId &&
        !resolved.has(e.payload.key as string) &&
        (!interruptId || e.payload.key === interruptId),
    );
  }

  private async requireRun(runId: string): Promise<StoredRun> {
    const r = await this.o.store.getRun(runId);
    if (!r) throw new HostError(ErrorCode.NOT_FOUND, `run ${runId} not found`, { runId });
    return r;
  }
}
