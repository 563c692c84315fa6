import type { ErrorCode, HostError } from '../core/index.js';
import type { CapabilityBinding, DeviceProfile, SafetyStatus } from '../mhs/wire-types.js';

/** Everything policy may look at for one governed call (architecture.md, governed call steps 2-3). */
export interface GovernedCallContext {
  endpointId: string;
  connectorId: string;
  connectorEnabled: boolean;
  conformanceLevel: string | null;
  device: DeviceProfile;
  binding: CapabilityBinding;
  /** The validated capability input without `_mhs`. */
  input: Record<string, unknown>;
  /** `H(input)` (wire contract §1). */
  inputDigest: string;
  session: { sessionId: string; state: string; expiresAt: number };
  /** Latest `mhs__safety` result, when the caller read it. */
  safety?: SafetyStatus;
  resource?: string;
  expectedRevision?: number;
  taskId?: string;
  runId?: string;
  nodeId?: string;
  traceparent?: string;
  /**
   * Optional stable key of the step that makes this call (e.g. a run node across restarts). A later
   * call with the same key reuses a still-open approval for the same digest and voids one for another
   * digest (HOST-041). Defaults to `runId`+`nodeId`, else none.
   */
  approvalKey?: string;
  /** Who asked for the call (e.g. the MCP gateway's agent token), shown to the approving operator; never a voter. */
  requestedBy?: { kind: 'agent' | 'human' | 'system'; id: string; name?: string };
  /**
   * Throws (e.g. `MHS.HOST.DEVICE_GATE_CLOSED`) when the command could not be sent now. Checked after an approval
   * and before its permit is issued, so no permit is issued for a call that cannot go out (issue 16).
   */
  assertSendable?: () => void;
}

/** An approval as recorded by the trusted UI/policy component (HOST-042, 044, 045). */
export interface ApprovalRecord {
  approval_id: string;
  decision: 'approve' | 'deny';
  method: 'human_click' | 'policy_rule' | 'dual_control';
  principals: Array<{ kind: 'human' | 'system'; id: string }>;
  input_digest: string;
  decided_at: string;
  reason?: string;
  evidence_ref?: string;
}

/** Outcome of policy + approval + permit for one call. */
export type GateDecision =
  | {
      kind: 'allow';
      approval?: ApprovalRecord;
      permitId?: string;
      /**
       * Call when the allowed call is refused before anything is sent (its intent not journalled: a shut device
       * gate, the ledger unavailable): revokes and records the permit and records the approval as
       * `approved_not_executed` (issue 16). Set by gates that approve or hand out permits.
       */
      notExecuted?: (error: HostError) => Promise<void>;
    }
  | { kind: 'deny'; code: ErrorCode; message: string; details?: Record<string, unknown> };

/**
 * The policy/approval step of the governed call. Deny by default (HOST-043). `authorize` may wait
 * for a human decision; it settles early with a deny when `signal` aborts.
 */
export interface CallGate {
  authorize(ctx: GovernedCallContext, signal?: AbortSignal): Promise<GateDecision>;
  /**
   * Call right before sending a command that carries `permitId`: atomically marks the permit as used
   * by this one send and returns false when it was revoked, expired or already used, in which case the
   * caller MUST NOT send it (HOST-047, 070) and records `command.not_sent` with `MHS.AUTH.PERMIT_REVOKED`.
   * Optional for gates that never hand out permits.
   */
  claimPermit?(permitId: string): Promise<boolean>;
}
