import type { DurableLedger } from '../ledger/ledger-types.js';

/** A change the operator surface should show at once (pushed over SSE). */
export interface OperatorEvent {
  type:
    | 'approval.requested'
    | 'approval.updated'
    | 'permit.issued'
    | 'permit.revoked'
    | 'permit.claimed'
    | 'estop'
    | 'reset'
    | 'endpoint.enabled'
    | 'endpoint.disabled'
    | 'ledger.appended'
    | 'ledger.status';
  id: number;
  data: Record<string, unknown>;
}

/** In-process fan-out of operator events. Listeners never throw into the emitter. */
export interface OperatorEvents {
  emit(type: OperatorEvent['type'], data: Record<string, unknown>): void;
  subscribe(fn: (e: OperatorEvent) => void): () => void;
}

/** Creates the event bus shared by the policy gate, permits, e-stop and the operator routes. */
export function createOperatorEvents(): OperatorEvents {
  const listeners = new Set<(e: OperatorEvent) => void>();
  let seq = 0;
  return {
    emit(type, data) {
      const e: OperatorEvent = { type, id: ++seq, data };
      for (const l of [...listeners]) {
        try {
          l(e);
        } catch {
          // A broken subscriber (closed socket) must not break a decision.
        }
      }
    },
    subscribe(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
  };
}

/**
 * Announces every change of the store's availability as a `ledger.status` event (HOST-093: a durable-store failure
 * is visible to the operator at once, not at the next poll). Returns the unsubscribe function.
 */
export function announceLedgerStatus(
  ledger: Pick<DurableLedger, 'onStatus'>,
  events: Pick<OperatorEvents, 'emit'>,
): () => void {
  return ledger.onStatus((s) => events.emit('ledger.status', { ...s }));
}

/**
 * Wraps a ledger so that every committed append is announced as a `ledger.appended` event (seq,
 * kind, command_id), letting the console show receipts and e-stops as they are recorded. Other
 * members pass through unchanged. Give the wrapped ledger to the engine and the operator services.
 */
export function observeLedger<
  L extends { append: (...a: never[]) => Promise<unknown>; appendBatch: (...a: never[]) => Promise<unknown> },
>(ledger: L, events: OperatorEvents): L {
  const announce = (e: unknown) => {
    const x = e as { seq?: number; kind?: string; command_id?: unknown };
    events.emit('ledger.appended', { seq: x.seq ?? null, kind: x.kind ?? null, command_id: x.command_id ?? null });
  };
  return new Proxy(ledger, {
    get(target, prop) {
      const v = Reflect.get(target, prop) as unknown;
      if (prop === 'append') {
        return async (...a: never[]) => {
          const e = await target.append(...a);
          announce(e);
          return e;
        };
      }
      if (prop === 'appendBatch') {
        return async (...a: never[]) => {
          const es = (await target.appendBatch(...a)) as unknown[];
          for (const e of es) announce(e);
          return es;
        };
      }
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
