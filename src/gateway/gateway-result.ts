/**
 * What a gateway tool call returns over MCP (HOST-033, 062, 072). A capability call that reached the endpoint
 * returns `{command_id, outcome, receipt}` with the full receipt and `isError: false`, whatever the receipt's
 * status (a refusal is a receipt). Host faults (policy, approval, session, transport) are `isError: true` with the
 * full error (`mhs_code`, remediation, details); an approval that is still pending or was denied also names the
 * approval, the input digest it binds and what the operator must do. The first call of a session on a device
 * also carries that device's disclosure (NOT_CERTIFIED, mode, fidelity gaps), as text and in `disclosure`.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import { ErrorCode, jcs } from '../core/index.js';
import type { MhsWireError } from '../core/index.js';
import { sessionDisclosureText } from '../engine/session-disclosure.js';
import type { SessionDisclosure } from '../engine/session-disclosure.js';
import type { DispatchedCall } from '../engine/tool-dispatch.js';

/** The decision an agent is waiting for, as a tool result names it. */
export interface ApprovalState {
  status: 'pending' | 'denied' | 'timeout';
  approval_id: string;
  input_digest: string | null;
  /** What has to happen next, for a person. */
  next: string;
}

function approvalState(e: MhsWireError, dbHint: string): ApprovalState | null {
  const id = e.details?.approval_id;
  if (typeof id !== 'string') return null;
  const digest = typeof e.details?.input_digest === 'string' ? e.details.input_digest : null;
  if (e.mhs_code === ErrorCode.HOST_APPROVAL_REQUIRED)
    return {
      status: 'pending',
      approval_id: id,
      input_digest: digest,
      next: `An operator must approve ${id} in the console or with \`mhs-host approvals approve ${id} --operator NAME${dbHint}\`; then call this tool again with the same arguments (changed arguments void the approval).`,
    };
  if (e.mhs_code === ErrorCode.HOST_APPROVAL_TIMEOUT)
    return {
      status: 'timeout',
      approval_id: id,
      input_digest: digest,
      next: `Nobody decided ${id} in time and it expired; calling again asks for a new approval.`,
    };
  if (e.mhs_code === ErrorCode.HOST_APPROVAL_DENIED)
    return {
      status: 'denied',
      approval_id: id,
      input_digest: digest,
      next: `An operator denied ${id}: do not retry this command unchanged; ask the user how to proceed.`,
    };
  return null;
}

/** The MCP result of one dispatched call. `dbHint` is appended to the CLI commands it suggests. */
export function toCallToolResult(call: DispatchedCall, dbHint = ''): CallToolResult {
  const error = call.isError ? (call.result.error as MhsWireError | undefined) : undefined;
  const approval = error ? approvalState(error, dbHint) : null;
  const structured: Record<string, unknown> = approval ? { ...call.result, approval } : call.result;
  const content: CallToolResult['content'] = [{ type: 'text', text: jcs(structured) }];
  if (approval) content.unshift({ type: 'text', text: `Approval ${approval.status}: ${approval.next}` });
  // HOST-003, 013, 015: the first call of the MCP session on a device carries its disclosure, in words, first.
  const disclosure = call.result.disclosure as SessionDisclosure | undefined;
  if (disclosure) content.unshift({ type: 'text', text: sessionDisclosureText(disclosure) });
  return { content, structuredContent: structured, isError: call.isError };
}
