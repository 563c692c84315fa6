/**
 * A forwarded governed call withdrawn before any endpoint holder journaled it (issue 19): what its caller is told, and
 * the ledger entry that is its only trace (no command exists).
 */
import { ErrorCode, HostError, toHostError } from '../core/index.js';
import type { Ledger } from '../ledger/index.js';
import type { InvokeRequest } from './call-types.js';

/** As a local call aborted before its send: nothing was sent, the call may be made again. */
export function withdrawnError(requestId: string, req: InvokeRequest, aborted = true): HostError {
  return new HostError(
    ErrorCode.TRANSPORT_TIMEOUT_PRESEND,
    `call ${req.capabilityId} on ${req.deviceId} was withdrawn before it was sent${aborted ? ' (aborted by the caller)' : ''}`,
    { requestId, endpoint_id: req.endpointId, device_id: req.deviceId, sent: false, aborted },
    { remediation: 'Nothing was sent; the call can be made again.', retryable: true },
  );
}

/**
 * Appends `error` (`phase: forward_withdrawn`, `sent: false`, `executed: false`, the request id and `e`) and returns
 * `e`. A failed append is reported to `onError` and named in the returned error (HOST-093), never dropped.
 */
export async function recordWithdrawn(
  ledger: Pick<Ledger, 'append'>,
  onError: ((err: HostError) => void) | undefined,
  req: InvokeRequest,
  requestId: string,
  e: HostError,
): Promise<HostError> {
  try {
    await ledger.append({
      kind: 'error',
      phase: 'forward_withdrawn',
      request_id: requestId,
      endpoint_id: req.endpointId,
      device_id: req.deviceId,
      capability_id: req.capabilityId,
      ...(req.runId ? { run_id: req.runId } : {}),
      ...(req.nodeId ? { node_id: req.nodeId } : {}),
      ...(req.taskId ? { task_id: req.taskId } : {}),
      sent: false,
      executed: false,
      error: e.toWire(),
    });
    return e;
  } catch (err) {
    const le = toHostError(err, ErrorCode.HOST_LEDGER_UNAVAILABLE);
    onError?.(le);
    return new HostError(
      e.code,
      e.message,
      { ...e.details, ledger_error: le.toWire() },
      { remediation: e.remediation, retryable: e.retryable },
    );
  }
}
