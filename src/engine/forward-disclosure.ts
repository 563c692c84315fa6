/**
 * HOST-003 across host processes (issue 19): the session disclosure of a forwarded call is recorded by the endpoint's
 * holder and shown on its sender's surface, through the call's `endpoint_requests` row, before the call goes on.
 */
import { ErrorCode, HostError, toHostError } from '../core/index.js';
import type { Clock } from '../core/index.js';
import type { EndpointRequest, EndpointRequests } from './endpoint-requests.js';
import type { DisclosureRequest, SessionDisclosure } from './session-disclosure.js';

/** The error a stored `{code, message, details}` names (a failed forwarded call, a refused disclosure). */
export function storedError(result: unknown): HostError {
  const r = (result ?? {}) as { code?: string; message?: string; details?: Record<string, unknown> };
  return new HostError(
    (r.code ?? ErrorCode.HOST_INTERNAL) as ErrorCode,
    r.message ?? 'the forwarded call failed',
    r.details ?? {},
  );
}

/** What the holder's side of the relay needs from its forwarding. */
export interface DisclosureRelayDeps {
  requests: EndpointRequests;
  clock: Clock;
  pollMs: number;
  /** Woken by the sender's answer (notice `a`), by request id. */
  relays: Map<string, () => void>;
  closed: () => boolean;
}

/**
 * The holder's `show` for a call whose sender shows disclosures: hands `d` to the sender through the row and returns
 * once the sender's surface showed it. Raises the sender's surface error, `MHS.HOST.ENDPOINT_FORWARD_TIMEOUT` when no
 * answer came within `waitMs`, or `CONFLICT` when the call was withdrawn meanwhile: each refuses the call before its
 * intent, so nothing is sent.
 */
export async function relayDisclosure(
  o: DisclosureRelayDeps,
  req: EndpointRequest,
  d: SessionDisclosure,
  withdrawn: AbortSignal,
  waitMs: number,
): Promise<void> {
  const gone = () =>
    new HostError(ErrorCode.CONFLICT, `forwarded call ${req.requestId} was withdrawn or already sent`, {
      requestId: req.requestId,
    });
  if (!(await o.requests.offerDisclosure(req.requestId, d))) throw gone();
  const limit = o.clock.now() + waitMs;
  for (;;) {
    if (withdrawn.aborted || o.closed()) throw gone();
    const r = await o.requests.get(req.requestId);
    const ack = r?.disclosureAck;
    if (ack) {
      if ('error' in ack) throw storedError(ack.error);
      return;
    }
    if (r?.status !== 'pending') throw gone();
    const left = limit - o.clock.now();
    if (left <= 0)
      throw new HostError(
        ErrorCode.HOST_ENDPOINT_FORWARD_TIMEOUT,
        `the sender of forwarded call ${req.requestId} did not show its session disclosure in time; nothing was sent`,
        { requestId: req.requestId, sender: req.sender, endpoint_id: d.endpoint_id, device_id: d.device_id },
        { remediation: 'Send the call again.' },
      );
    await new Promise<void>((resolve) => {
      const done = () => {
        o.clock.clearTimeout(t);
        o.relays.delete(req.requestId);
        withdrawn.removeEventListener('abort', done);
        resolve();
      };
      const t = o.clock.setTimeout(done, Math.max(1, Math.min(o.pollMs, left)));
      o.relays.set(req.requestId, done);
      withdrawn.addEventListener('abort', done, { once: true });
    });
  }
}

/** The sender's side: shows the disclosure the holder handed over on the caller's surface and answers the holder. */
export async function showForHolder(
  requests: EndpointRequests,
  requestId: string,
  d: SessionDisclosure,
  show: NonNullable<DisclosureRequest['show']>,
): Promise<void> {
  try {
    await show(d);
  } catch (err) {
    const e = toHostError(err);
    await requests.ackDisclosure(requestId, { error: { code: e.code, message: e.message, details: e.details } });
    return;
  }
  await requests.ackDisclosure(requestId, { shown: true });
}
