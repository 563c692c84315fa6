/**
 * Single-use permits (wire contract §7), issued and revoked only through the operator tool
 * `mhs__permit` (CORE-130), checked and consumed by capability calls.
 */
import { ErrorCode, HostError, isoAt, type Clock, type IdFactory } from '../core/index.js';
import type { Permit } from '../mhs/wire-types.js';
import type { EvidenceLog } from './evidence.js';

export interface IssueRequest {
  sessionId: string;
  capabilityId: string;
  inputDigest: string;
  resource?: string;
  expectedRevision?: number;
  ttlMs: number;
  approvalRef: unknown;
}

interface Held {
  permit: Permit;
  expiresAt: number;
}

/** Permits of one endpoint. */
export class PermitStore {
  private readonly held = new Map<string, Held>();

  constructor(
    private readonly clock: Clock,
    private readonly ids: IdFactory,
    private readonly evidence: EvidenceLog,
  ) {}

  issue(req: IssueRequest): Permit {
    const expiresAt = this.clock.now() + req.ttlMs;
    const permit: Permit = {
      permit_id: this.ids.next('permit'),
      session_id: req.sessionId,
      capability_id: req.capabilityId,
      input_digest: req.inputDigest,
      resource: req.resource ?? null,
      expected_revision: req.expectedRevision ?? null,
      expires_at: isoAt(expiresAt),
      single_use: true,
      state: 'issued',
    };
    this.held.set(permit.permit_id, { permit, expiresAt });
    this.evidence.append('permit.issue', { ...permit, approval_ref: req.approvalRef ?? null });
    return { ...permit };
  }

  /** Throws `MHS.SCHEMA.INVALID_INPUT` for an unknown permit id. */
  revoke(permitId: string): Permit {
    const h = this.held.get(permitId);
    if (!h) throw new HostError(ErrorCode.SCHEMA_INVALID_INPUT, `unknown permit ${permitId}`, { permit_id: permitId });
    if (h.permit.state === 'issued') {
      h.permit.state = 'revoked';
      this.evidence.append('permit.revoke', { permit_id: permitId });
    }
    return { ...h.permit };
  }

  /**
   * The refusal code for using `permitId` on this call, or null when it is valid
   * (§7: REQUIRED, DIGEST_MISMATCH, CONSUMED, REVOKED, EXPIRED).
   */
  check(
    permitId: string | undefined,
    sessionId: string,
    capabilityId: string,
    inputDigest: string,
  ): { code: ErrorCode; details: Record<string, unknown> } | null {
    if (permitId === undefined)
      return { code: ErrorCode.AUTH_PERMIT_REQUIRED, details: { capability_id: capabilityId } };
    const h = this.held.get(permitId);
    if (!h) return { code: ErrorCode.AUTH_PERMIT_REQUIRED, details: { permit_id: permitId, reason: 'unknown permit' } };
    const p = h.permit;
    if (p.state === 'consumed') return { code: ErrorCode.AUTH_PERMIT_CONSUMED, details: { permit_id: permitId } };
    if (p.state === 'revoked') return { code: ErrorCode.AUTH_PERMIT_REVOKED, details: { permit_id: permitId } };
    if (p.state === 'expired' || this.clock.now() >= h.expiresAt) {
      p.state = 'expired';
      return { code: ErrorCode.AUTH_PERMIT_EXPIRED, details: { permit_id: permitId, expires_at: p.expires_at } };
    }
    if (p.input_digest !== inputDigest || p.capability_id !== capabilityId || p.session_id !== sessionId) {
      return {
        code: ErrorCode.AUTH_PERMIT_DIGEST_MISMATCH,
        details: { permit_id: permitId, expected: p.input_digest, actual: inputDigest },
      };
    }
    return null;
  }

  consume(permitId: string, commandId: string): void {
    const h = this.held.get(permitId);
    if (!h) return;
    h.permit.state = 'consumed';
    this.evidence.append('permit.consume', { permit_id: permitId, command_id: commandId });
  }
}
