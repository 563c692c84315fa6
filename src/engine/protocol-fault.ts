import { ErrorCode, HostError, unencodablePath } from '../core/index.js';
import type { LedgerAppend } from '../ledger/ledger-types.js';

/**
 * An endpoint's reply that the host cannot record as is (a string JCS cannot encode, issue 16 item 3): a
 * protocol fault of that endpoint alone, `MHS.HOST.ENDPOINT_PROTOCOL_FAULT`. Null when `reply` is encodable.
 */
export function unencodableReply(
  endpointId: string,
  commandId: string,
  what: 'receipt' | 'fault',
  reply: unknown,
): HostError | null {
  const path = unencodablePath(reply);
  if (path === null) return null;
  return new HostError(
    ErrorCode.HOST_ENDPOINT_PROTOCOL_FAULT,
    `endpoint ${endpointId} answered ${commandId} with a ${what} holding a string canonical JSON cannot encode (a lone UTF-16 surrogate at ${path || '/'})`,
    { endpoint_id: endpointId, command_id: commandId, what, path, reason: 'lone_surrogate' },
    {
      remediation:
        'The endpoint must send well-formed Unicode. Reconcile the command (its retained receipt) before sending another to that device.',
    },
  );
}

/**
 * The `error` entry naming the endpoint of a protocol fault. It names the command under `subject_command_id`,
 * not `command_id`: an `error` of a command settles its gate (gate-projection.ts), and after a receipt nobody
 * can say the command did not execute (HOST-091).
 */
export function protocolFaultEntry(e: HostError, deviceId: string, traceparent: string | null): LedgerAppend {
  return {
    kind: 'error',
    phase: 'protocol_fault',
    endpoint_id: e.details['endpoint_id'],
    device_id: deviceId,
    subject_command_id: e.details['command_id'],
    error: e.toWire(),
    ...(traceparent ? { traceparent } : {}),
  };
}
