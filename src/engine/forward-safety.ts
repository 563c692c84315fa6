import { ErrorCode, toHostError } from '../core/index.js';
import type { EstopOutcome, OperatorPrincipal, SafetyActions } from '../policy/estop.js';
import type { OperatorEvents } from '../policy/operator-events.js';
import type { ForwardedOpOther } from './endpoint-requests.js';

/** A forwarded e-stop or reset not claimed by the endpoint's holder within this is withdrawn and made here. */
export const SAFETY_UNCLAIMED_MS = 2_000;
/** How long a claimed e-stop or reset is awaited (plus the transport margin and slack). */
export const SAFETY_FORWARD_WAIT_MS = 10_000;

/** What {@link forwardedSafety} needs of the endpoint forwarding (issue 19). */
export interface SafetyForwarder {
  liveHolderElsewhere(endpointId: string): Promise<string | undefined>;
  sendOp(
    connectorId: string,
    endpointId: string,
    op: ForwardedOpOther,
    waitMs: number,
    opts?: { unclaimedMs?: number },
  ): Promise<unknown>;
}

/**
 * The trusted e-stop and reset of a process on a shared PostgreSQL store (issue 19): an endpoint another live process
 * attaches is stopped or reset by that process (`endpoint_requests`, kind `safety`), through its own operator route,
 * recorded once as its `estop.request`/`estop.receipt` pair with this caller's operator, and its outcome (or
 * refusal) returned here as a local action's. An e-stop never waits on a holder that does not take it up: not
 * claimed within {@link SAFETY_UNCLAIMED_MS} it is withdrawn and sent here; claimed and not answered in time, it is
 * sent here as well (a second stop of a stopped device changes nothing; a missed one is what HOST-046 forbids).
 */
export function forwardedSafety(
  local: SafetyActions,
  fwd: SafetyForwarder,
  events?: Pick<OperatorEvents, 'emit'>,
): SafetyActions {
  const act = async (
    what: 'estop' | 'reset',
    endpointId: string,
    deviceId: string,
    operator: OperatorPrincipal,
  ): Promise<EstopOutcome> => {
    const connectorId = await fwd.liveHolderElsewhere(endpointId).catch(() => undefined);
    if (connectorId) {
      const who: OperatorPrincipal = {
        id: operator.id,
        name: operator.name,
        ...(operator.kind ? { kind: operator.kind } : {}),
      };
      try {
        const out = (await fwd.sendOp(
          connectorId,
          endpointId,
          { kind: 'safety', action: what, deviceId, operator: who },
          SAFETY_FORWARD_WAIT_MS,
          { unclaimedMs: SAFETY_UNCLAIMED_MS },
        )) as EstopOutcome | undefined;
        if (out) {
          events?.emit(what, {
            endpoint_id: endpointId,
            device_id: deviceId,
            operator: { kind: who.kind ?? 'human', id: who.id, name: who.name },
            outcome: out,
            forwarded: true,
          });
          return out;
        }
      } catch (err) {
        if (what === 'reset' || toHostError(err).code !== ErrorCode.HOST_ENDPOINT_FORWARD_TIMEOUT) throw err;
      }
    }
    return local[what](endpointId, deviceId, operator);
  };
  return {
    ...local,
    estop: (e, d, op) => act('estop', e, d, op),
    reset: (e, d, op) => act('reset', e, d, op),
  };
}
