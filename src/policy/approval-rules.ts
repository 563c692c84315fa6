import { ErrorCode, isoAt } from '../core/index.js';
import type { ApprovalRecord } from './call-gate.js';
import type { ApprovalMethod } from './decide.js';

/**
 * Every status of an approval request. `consumed`: taken by exactly one governed call, whose intent is journalled
 * (approved and executed, or at least sent); `approved_not_executed`: approved, but the call it was taken by was
 * refused before anything was sent (its permit revoked and recorded, issue 16); `voided`: withdrawn before use
 * (input changed, device unsafe, its run or node cancelled).
 */
export const APPROVAL_STATUSES = [
  'pending',
  'approved',
  'denied',
  'voided',
  'consumed',
  'approved_not_executed',
  'expired',
] as const;

/** Lifecycle of an approval request (see {@link APPROVAL_STATUSES}). */
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/** A human approver, always from operator authentication, never from model text (HOST-035, 042). */
export interface HumanPrincipal {
  kind: 'human';
  /** Token id of the operator. */
  id: string;
  /** Token name, shown in the console and the ledger. */
  name: string;
}

/** One approval request as stored (durable; see approval-store.ts). */
export interface ApprovalRequest {
  approval_id: string;
  request_key: string | null;
  status: ApprovalStatus;
  method: ApprovalMethod;
  principals_needed: 1 | 2;
  /** Approvals collected so far (dual control collects two). */
  votes: Array<{ principal: HumanPrincipal; at: string }>;
  input_digest: string;
  endpoint_id: string;
  device_id: string;
  capability_id: string;
  session_id: string;
  risk_class: string;
  permit_required: boolean;
  run_id: string | null;
  node_id: string | null;
  created_at: string;
  decided_at: string | null;
  reason: string | null;
  /** The HOST-040 view, built from the manifest and the validated input (approval-view.ts). */
  view: Record<string, unknown>;
  /** Who asked for the call (an agent of the MCP gateway, ...), when known. Shown, never counted as a vote. */
  requested_by?: { kind: string; id: string; name?: string } | null;
}

/** A vote from the operator surface. */
export interface Vote {
  principal: HumanPrincipal;
  decision: 'approve' | 'deny';
  reason?: string;
}

/** Result of applying a vote: the next request and the records to write, or a refusal code. */
export type VoteResult =
  | { ok: true; next: ApprovalRequest; final: ApprovalRecord | null; partial: boolean }
  | { ok: false; code: ErrorCode; reason: string };

/**
 * Applies one operator vote to a pending request, purely. Deny by any principal settles the request;
 * approval settles it when `principals_needed` distinct humans approved (`dual_control`: two; the
 * same operator twice is refused, HOST-044). Method and principals are recorded exactly.
 */
export function applyVote(req: ApprovalRequest, vote: Vote, now: number): VoteResult {
  if (req.status !== 'pending') return { ok: false, code: ErrorCode.CONFLICT, reason: `request is ${req.status}` };
  if (vote.principal?.kind !== 'human' || !vote.principal.id) {
    return { ok: false, code: ErrorCode.FORBIDDEN, reason: 'only an authenticated human may decide' };
  }
  const at = isoAt(now);
  if (vote.decision === 'deny') {
    const next: ApprovalRequest = { ...req, status: 'denied', decided_at: at, reason: vote.reason ?? null };
    return { ok: true, next, final: record(next, 'deny', [vote.principal], at, vote.reason), partial: false };
  }
  if (vote.decision !== 'approve') return { ok: false, code: ErrorCode.VALIDATION_ERROR, reason: 'bad decision' };
  if (req.votes.some((v) => v.principal.id === vote.principal.id)) {
    return { ok: false, code: ErrorCode.FORBIDDEN, reason: 'the same principal cannot approve twice' };
  }
  const votes = [...req.votes, { principal: vote.principal, at }];
  if (votes.length < req.principals_needed) {
    return { ok: true, next: { ...req, votes }, final: null, partial: true };
  }
  const next: ApprovalRequest = { ...req, votes, status: 'approved', decided_at: at, reason: vote.reason ?? null };
  const principals = votes.map((v) => v.principal);
  return { ok: true, next, final: record(next, 'approve', principals, at, vote.reason), partial: false };
}

function record(
  req: ApprovalRequest,
  decision: 'approve' | 'deny',
  principals: HumanPrincipal[],
  at: string,
  reason?: string,
): ApprovalRecord {
  const r: ApprovalRecord = {
    approval_id: req.approval_id,
    decision,
    method: req.method,
    principals: principals.map((p) => ({ kind: 'human' as const, id: p.id })),
    input_digest: req.input_digest,
    decided_at: at,
    evidence_ref: `approval:${req.approval_id}`,
  };
  if (reason) r.reason = reason;
  return r;
}

/** The record of a policy-rule approval: method `policy_rule`, a system principal, never a click (HOST-044). */
export function policyRecord(approvalId: string, ruleId: string, inputDigest: string, now: number): ApprovalRecord {
  return {
    approval_id: approvalId,
    decision: 'approve',
    method: 'policy_rule',
    principals: [{ kind: 'system', id: `policy:${ruleId}` }],
    input_digest: inputDigest,
    decided_at: isoAt(now),
    evidence_ref: `policy_rule:${ruleId}`,
  };
}
