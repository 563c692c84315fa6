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
    | 'ledger.appended';
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
