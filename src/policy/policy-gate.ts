import { ErrorCode, H, HostError, createIdFactory, isoAt, toHostError } from '../core/index.js';
import type { Clock, IdFactory } from '../core/index.js';
import type { Db } from '../ledger/db.js';
import type { Ledger, LedgerAppend } from '../ledger/ledger-types.js';
import type { SafetyStatus } from '../mhs/wire-types.js';
import { DEFAULT_APPROVAL_POLL_MS } from './approval-poll.js';
import { applyVote, policyRecord } from './approval-rules.js';
import type { ApprovalRequest, ApprovalStatus, Vote } from './approval-rules.js';
import { createApprovalStore } from './approval-store.js';
import type { ApprovalStore } from './approval-store.js';
import { buildApprovalView } from './approval-view.js';
import { ApprovalWaiters } from './approval-waiters.js';
import type { ApprovalRecord, CallGate, GateDecision, GovernedCallContext } from './call-gate.js';
import { decideCall, safetyRefusal } from './decide.js';
import type { OperatorEvents } from './operator-events.js';
import type { PermitService } from './permits.js';
import type { PolicyConfig } from './policy-config.js';

/** What {@link createPolicyGate} needs. */
export interface PolicyGateDeps {
  db: Db;
  ledger: Ledger;
  clock: Clock;
  /** The current policy; throwing or returning null means "policy engine unavailable" → refuse (HOST-043). */
  policy: PolicyConfig | (() => PolicyConfig | null | Promise<PolicyConfig | null>);
  /** Permit issuance through the operator route; without it, calls needing a permit are refused. */
  permits?: PermitService;
  events?: OperatorEvents;
  ids?: IdFactory;
  /**
   * A fresh `mhs__safety` read for effectful calls whose context carries none. Resolve undefined
   * when there is no such source (then the manifest's interlocks count); a rejection refuses.
   */
  readSafety?: (endpointId: string, deviceId: string) => Promise<SafetyStatus | undefined>;
  /** Re-reads pending requests this often, for decisions made by another host process (default {@link DEFAULT_APPROVAL_POLL_MS}). */
  pollMs?: number;
}

/** The policy gate: a {@link CallGate} plus what the operator surface needs. */
export interface PolicyGate extends CallGate {
  claimPermit(permitId: string): Promise<boolean>;
  /** Applies an operator vote (approve/deny; dual control needs two distinct operators). */
  vote(approvalId: string, vote: Vote): Promise<ApprovalRequest>;
  get(approvalId: string): Promise<ApprovalRequest | undefined>;
  /**
   * Voids the open (pending or approved) approvals of a run, or of one node of it, or one approval, and records each
   * as an `approval`/`voided` entry with `reason` (e.g. `run_cancelled`, `forward_withdrawn`): a cancelled step's
   * approval can no longer be granted or used (issue 16). Returns the voided requests.
   */
  voidOpen(
    match: { runId: string; nodeId?: string } | { approvalId: string },
    reason: string,
  ): Promise<ApprovalRequest[]>;
  /** See `GateDecision.notExecuted`: what an allowed call refused before sending undoes (issue 16). */
  notExecuted(decision: GateDecision & { kind: 'allow' }, error: HostError): Promise<void>;
  list(filter?: { status?: ApprovalStatus[]; limit?: number }): Promise<ApprovalRequest[]>;
  readonly store: ApprovalStore;
}

const deny = (code: ErrorCode, message: string, details?: Record<string, unknown>): GateDecision =>
  details ? { kind: 'deny', code, message, details } : { kind: 'deny', code, message };

/**
 * Creates the policy gate of the governed call (architecture.md steps 2-3). It decides with
 * {@link decideCall}, records every decision in the ledger (HOST-045), waits for operators when a
 * human must decide, binds each approval to the input digest it shows (HOST-041), and issues a
 * permit through the operator route after approval. It never reads a principal from the call
 * context or the input: principals come only from {@link PolicyGate.vote} (HOST-035, 042).
 */
export function createPolicyGate(deps: PolicyGateDeps): PolicyGate {
  const { ledger, clock, events } = deps;
  const store = createApprovalStore(deps.db);
  const ids = deps.ids ?? createIdFactory(clock);
  const waiters = new ApprovalWaiters(store, clock, deps.pollMs ?? DEFAULT_APPROVAL_POLL_MS);
  const notify = (id: string) => waiters.notify(id);

  async function loadPolicy(): Promise<PolicyConfig | null> {
    try {
      return typeof deps.policy === 'function' ? await deps.policy() : deps.policy;
    } catch {
      return null;
    }
  }

  function scope(ctx: GovernedCallContext): Record<string, unknown> {
    const s: Record<string, unknown> = {
      endpoint_id: ctx.endpointId,
      device_id: ctx.device?.device_id ?? null,
      capability_id: ctx.binding?.capability_id ?? null,
      session_id: ctx.session?.sessionId ?? null,
    };
    if (ctx.runId) s.run_id = ctx.runId;
    if (ctx.nodeId) s.node_id = ctx.nodeId;
    if (ctx.taskId) s.task_id = ctx.taskId;
    if (ctx.traceparent) s.traceparent = ctx.traceparent;
    return s;
  }

  const approvalEntry = (event: string, fields: Record<string, unknown>): LedgerAppend => ({
    kind: 'approval',
    event,
    ...fields,
  });

  async function setStatus(req: ApprovalRequest, status: ApprovalStatus, reason: string | null): Promise<boolean> {
    const next = { ...req, status, reason: reason ?? req.reason, decided_at: req.decided_at ?? isoAt(clock.now()) };
    const ok = await store.update(next, req.status, req.votes.length);
    if (ok) {
      events?.emit('approval.updated', { approval: next });
      notify(req.approval_id);
    }
    return ok;
  }

  /** Records a policy refusal (HOST-045: denials are evidence too) and returns the deny. */
  async function refused(
    ctx: GovernedCallContext,
    r: { code: ErrorCode; reason: string; details?: Record<string, unknown> },
    extra: Record<string, unknown> = {},
  ): Promise<GateDecision> {
    await ledger.append(
      approvalEntry('refused', {
        ...scope(ctx),
        ...extra,
        decision: 'deny',
        method: 'policy_rule',
        principals: [{ kind: 'system', id: 'policy:deny-by-default' }],
        input_digest: ctx.inputDigest,
        decided_at: isoAt(clock.now()),
        reason: r.reason,
        code: r.code,
      }),
    );
    return deny(r.code, `refused by policy: ${r.reason}`, { reason: r.reason, ...r.details });
  }

  /**
   * For an effectful call without a safety read, reads `mhs__safety` (interlocks, e-stop) when a
   * reader is configured; a failed read counts as unknown interlocks, which refuse (HOST-043).
   */
  async function withFreshSafety(ctx: GovernedCallContext): Promise<GovernedCallContext> {
    if (ctx.safety || !deps.readSafety || ctx.binding?.effect === 'read' || !ctx.device) return ctx;
    try {
      const safety = await deps.readSafety(ctx.endpointId, ctx.device.device_id);
      return safety ? { ...ctx, safety } : ctx;
    } catch {
      return {
        ...ctx,
        safety: {
          device_id: ctx.device.device_id,
          estop: { kind: ctx.device.estop?.kind, engaged: false, physical_ref: ctx.device.estop?.physical_ref ?? null },
          interlocks: [{ id: 'safety_read_failed', state: 'unknown' }],
          notice: 'MHS.SAFETY.NOT_CERTIFIED',
        },
      };
    }
  }

  async function issuePermitFor(
    ctx: GovernedCallContext,
    approval: ApprovalRecord,
    ttlMs: number,
  ): Promise<GateDecision> {
    if (!deps.permits) {
      return deny(ErrorCode.AUTH_PERMIT_REQUIRED, 'a permit is required and no operator route is configured', {
        approval_id: approval.approval_id,
      });
    }
    try {
      const p = await deps.permits.issue(
        {
          approval_id: approval.approval_id,
          endpoint_id: ctx.endpointId,
          device_id: ctx.device.device_id,
          session_id: ctx.session.sessionId,
          capability_id: ctx.binding.capability_id,
          input_digest: ctx.inputDigest,
          resource: ctx.resource,
          expected_revision: ctx.expectedRevision,
          ttl_ms: ttlMs,
        },
        scope(ctx),
      );
      return { kind: 'allow', approval, permitId: p.permit_id };
    } catch (err) {
      const e = toHostError(err);
      await ledger.append({ kind: 'error', stage: 'permit.issue', ...scope(ctx), error: e.toWire() });
      return deny(e.code, e.message, { approval_id: approval.approval_id, ...e.details });
    }
  }

  async function permitRouteProblem(ctx: GovernedCallContext): Promise<GateDecision | null> {
    const e = deps.permits ? await deps.permits.routeProblem(ctx.endpointId) : null;
    if (!e) return null;
    await ledger.append({ kind: 'error', stage: 'permit.route', ...scope(ctx), error: e.toWire() });
    return deny(
      e.code,
      `${ctx.binding.capability_id} needs a permit, which ${ctx.endpointId} cannot be given: ${e.message}`,
      { ...e.details, permit_required: true },
    );
  }

  /** Approved, but its call is refused before anything is sent: recorded, never shown as consumed (issue 16). */
  async function markNotExecuted(
    req: ApprovalRequest,
    code: string,
    extra: Record<string, unknown> = {},
  ): Promise<void> {
    if (!(await setStatus(req, 'approved_not_executed', code))) return;
    await ledger.append(
      approvalEntry('not_executed', {
        approval_id: req.approval_id,
        endpoint_id: req.endpoint_id,
        device_id: req.device_id,
        capability_id: req.capability_id,
        session_id: req.session_id,
        ...(req.run_id ? { run_id: req.run_id, node_id: req.node_id } : {}),
        input_digest: req.input_digest,
        code,
        ...extra,
      }),
    );
  }

  /** The caller's "could it be sent now" check; its error, or null. */
  function unsendable(ctx: GovernedCallContext): HostError | null {
    try {
      ctx.assertSendable?.();
      return null;
    } catch (err) {
      return toHostError(err);
    }
  }

  async function consume(ctx: GovernedCallContext, req: ApprovalRequest, ttlMs: number): Promise<GateDecision> {
    // Exactly one call consumes an approval; its digest must be the one sent (HOST-041).
    if (req.input_digest !== ctx.inputDigest) return deny(ErrorCode.HOST_APPROVAL_REQUIRED, 'approval digest differs');
    // Issue 16: no permit for a call that cannot be sent now (e.g. its device gate shut while the operator decided).
    const blocked = unsendable(ctx);
    if (blocked) {
      await markNotExecuted(req, blocked.code);
      return deny(blocked.code, blocked.message, { ...blocked.details, approval_id: req.approval_id });
    }
    if (!(await setStatus(req, 'consumed', req.reason))) {
      return deny(ErrorCode.HOST_APPROVAL_REQUIRED, 'approval was already used', { approval_id: req.approval_id });
    }
    const record: ApprovalRecord = {
      approval_id: req.approval_id,
      decision: 'approve',
      method: req.method,
      principals: req.votes.map((v) => ({ kind: 'human' as const, id: v.principal.id })),
      input_digest: req.input_digest,
      decided_at: req.decided_at ?? isoAt(clock.now()),
      evidence_ref: `approval:${req.approval_id}`,
    };
    if (req.reason) record.reason = req.reason;
    if (!req.permit_required) return { kind: 'allow', approval: record };
    const permitted = await issuePermitFor(ctx, record, ttlMs);
    if (permitted.kind === 'deny') await markNotExecuted({ ...req, status: 'consumed' }, permitted.code);
    return permitted;
  }

  async function authorize(ctx: GovernedCallContext, signal?: AbortSignal): Promise<GateDecision> {
    // The digest is recomputed here: the approval binds what is sent, not what a caller claims.
    if (H(ctx.input) !== ctx.inputDigest) {
      return deny(ErrorCode.SCHEMA_INVALID_INPUT, 'input_digest does not match H(input)');
    }
    const cfg = await loadPolicy();
    const outcome = decideCall(await withFreshSafety(ctx), cfg, clock.now());
    if (outcome.kind === 'refuse') return refused(ctx, outcome);
    if (outcome.kind === 'allow' || !cfg) return { kind: 'allow' };
    // A call that needs a permit the endpoint can never take is refused now, not after an operator approved it.
    if (outcome.permitRequired) {
      const noRoute = await permitRouteProblem(ctx);
      if (noRoute) return noRoute;
    }
    const ttlMs = Math.min(ctx.binding.permit?.ttl_ms ?? cfg.maxPermitTtlMs, cfg.maxPermitTtlMs);

    if (outcome.kind === 'policy_approve') {
      const blocked = outcome.permitRequired ? unsendable(ctx) : null;
      if (blocked) return deny(blocked.code, blocked.message, blocked.details);
      const id = ids.next('approval');
      const record = policyRecord(id, outcome.rule.id, ctx.inputDigest, clock.now());
      await store.insert(
        newRequest(ctx, id, 'consumed', 'policy_rule', 1, outcome.risk, outcome.permitRequired, ttlMs),
      );
      await ledger.append(approvalEntry('decided', { ...scope(ctx), ...record }));
      return outcome.permitRequired ? issuePermitFor(ctx, record, ttlMs) : { kind: 'allow', approval: record };
    }

    // A human decides. Reuse or void open requests of the same step (HOST-041).
    const key = ctx.approvalKey ?? (ctx.runId && ctx.nodeId ? `run:${ctx.runId}:${ctx.nodeId}` : null);
    let req: ApprovalRequest | undefined;
    if (key) {
      for (const open of await store.openByKey(key)) {
        if (open.input_digest === ctx.inputDigest && open.method === outcome.method && !req) {
          req = open;
          continue;
        }
        if (await setStatus(open, 'voided', 'input_changed')) {
          await ledger.append(
            approvalEntry('voided', {
              ...scope(ctx),
              approval_id: open.approval_id,
              input_digest: open.input_digest,
              new_input_digest: ctx.inputDigest,
              reason: 'input_changed',
            }),
          );
        }
      }
    }
    if (!req) {
      const id = ids.next('approval');
      req = newRequest(
        ctx,
        id,
        'pending',
        outcome.method,
        outcome.principalsNeeded,
        outcome.risk,
        outcome.permitRequired,
        ttlMs,
      );
      req.request_key = key;
      await store.insert(req);
      await ledger.append(
        approvalEntry('requested', {
          ...scope(ctx),
          approval_id: id,
          method: outcome.method,
          principals_needed: outcome.principalsNeeded,
          input_digest: ctx.inputDigest,
          risk_class: outcome.risk,
          permit_required: outcome.permitRequired,
          ...(ctx.requestedBy ? { requested_by: ctx.requestedBy } : {}),
        }),
      );
      events?.emit('approval.requested', { approval: req });
    }
    if (req.status === 'pending') {
      const settled = await waiters.wait(req.approval_id, signal, cfg.approvalTimeoutMs);
      if (settled === 'aborted') {
        return deny(ErrorCode.HOST_APPROVAL_REQUIRED, 'approval still pending', { approval_id: req.approval_id });
      }
      if (settled === 'timeout') {
        if (await setStatus(req, 'expired', 'approval_timeout')) {
          await ledger.append(
            approvalEntry('expired', { ...scope(ctx), approval_id: req.approval_id, input_digest: req.input_digest }),
          );
        }
        return deny(ErrorCode.HOST_APPROVAL_REQUIRED, 'no decision in time', { approval_id: req.approval_id });
      }
      req = settled;
    }
    if (req.status !== 'approved') {
      return deny(ErrorCode.HOST_APPROVAL_DENIED, `approval ${req.status}`, {
        approval_id: req.approval_id,
        status: req.status,
        reason: req.reason,
      });
    }
    // The device may have changed while the operator decided (e-stop, interlock): check again.
    const fresh = await withFreshSafety({ ...ctx, safety: undefined });
    const unsafe = safetyRefusal(fresh.safety ? fresh : ctx);
    if (unsafe) {
      if (await setStatus(req, 'voided', unsafe.reason)) {
        await ledger.append(
          approvalEntry('voided', {
            ...scope(ctx),
            approval_id: req.approval_id,
            input_digest: req.input_digest,
            reason: unsafe.reason,
          }),
        );
      }
      return refused(ctx, unsafe, { approval_id: req.approval_id });
    }
    return consume(ctx, req, ttlMs);
  }

  async function notExecuted(decision: GateDecision & { kind: 'allow' }, error: HostError): Promise<void> {
    // HOST-047: the permit of a call that was never sent is revoked (host side at once) and the revoke recorded.
    if (decision.permitId && deps.permits) {
      try {
        await deps.permits.revoke(
          decision.permitId,
          { kind: 'system', id: 'host:not-executed', name: 'host' },
          `not_executed: ${error.code}`,
        );
      } catch (err) {
        const e = toHostError(err);
        await ledger.append({ kind: 'error', stage: 'permit.revoke', permit_id: decision.permitId, error: e.toWire() });
      }
    }
    const req = decision.approval ? await store.get(decision.approval.approval_id) : undefined;
    if (req?.status === 'consumed')
      await markNotExecuted(req, error.code, decision.permitId ? { permit_id: decision.permitId } : {});
  }

  function newRequest(
    ctx: GovernedCallContext,
    id: string,
    status: ApprovalStatus,
    method: ApprovalRequest['method'],
    needed: 1 | 2,
    risk: string,
    permitRequired: boolean,
    ttlMs: number,
  ): ApprovalRequest {
    return {
      approval_id: id,
      request_key: null,
      status,
      method,
      principals_needed: needed,
      votes: [],
      input_digest: ctx.inputDigest,
      endpoint_id: ctx.endpointId,
      device_id: ctx.device.device_id,
      capability_id: ctx.binding.capability_id,
      session_id: ctx.session.sessionId,
      risk_class: risk,
      permit_required: permitRequired,
      run_id: ctx.runId ?? null,
      node_id: ctx.nodeId ?? null,
      created_at: isoAt(clock.now()),
      decided_at: status === 'pending' ? null : isoAt(clock.now()),
      reason: null,
      view: { ...buildApprovalView(ctx, ttlMs) },
      ...(ctx.requestedBy ? { requested_by: ctx.requestedBy } : {}),
    };
  }

  return {
    store,
    async authorize(ctx, signal) {
      try {
        const d = await authorize(ctx, signal);
        if (d.kind !== 'allow' || (!d.approval && !d.permitId)) return d;
        return { ...d, notExecuted: (e) => notExecuted(d, e) };
      } catch (err) {
        // Deny by default: any failure (ledger down, store error) refuses, never allows (HOST-043, 093).
        const e = toHostError(err);
        return deny(e.code, e.message, e.details);
      }
    },
    async claimPermit(permitId) {
      return deps.permits ? deps.permits.claim(permitId) : false;
    },
    get: (id) => store.get(id),
    list: (filter) => store.list(filter),
    async voidOpen(match, reason) {
      const voided: ApprovalRequest[] = [];
      const candidates =
        'approvalId' in match
          ? [await store.get(match.approvalId)].filter(
              (r): r is ApprovalRequest => r?.status === 'pending' || r?.status === 'approved',
            )
          : (await store.openByRun(match.runId)).filter(
              (r) => match.nodeId === undefined || r.node_id === match.nodeId,
            );
      for (const open of candidates) {
        if (!(await setStatus(open, 'voided', reason))) continue;
        await ledger.append(
          approvalEntry('voided', {
            approval_id: open.approval_id,
            endpoint_id: open.endpoint_id,
            device_id: open.device_id,
            capability_id: open.capability_id,
            session_id: open.session_id,
            run_id: open.run_id,
            node_id: open.node_id,
            input_digest: open.input_digest,
            reason,
          }),
        );
        voided.push({ ...open, status: 'voided', reason });
      }
      return voided;
    },
    notExecuted,
    async vote(approvalId, vote) {
      // Compare-and-set with a few re-reads, so two operators voting at once both count (dual control).
      let req: ApprovalRequest | undefined;
      let res: ReturnType<typeof applyVote> | undefined;
      for (let attempt = 0; attempt < 5; attempt++) {
        req = await store.get(approvalId);
        if (!req) throw new HostError(ErrorCode.NOT_FOUND, `no approval ${approvalId}`, { approval_id: approvalId });
        res = applyVote(req, vote, clock.now());
        if (!res.ok) {
          // Issue 20: a refused vote is evidence too (who tried, on what, why it was refused).
          await ledger
            .append(
              approvalEntry('vote_refused', {
                approval_id: approvalId,
                endpoint_id: req.endpoint_id,
                device_id: req.device_id,
                capability_id: req.capability_id,
                status: req.status,
                decision: vote.decision,
                principals: [{ kind: 'human', id: vote.principal.id, name: vote.principal.name }],
                code: res.code,
                reason: res.reason,
              }),
            )
            .catch((err: unknown) => {
              throw toHostError(err, ErrorCode.HOST_LEDGER_UNAVAILABLE);
            });
          throw new HostError(res.code, res.reason, { approval_id: approvalId, status: req.status });
        }
        if (await store.update(res.next, req.status, req.votes.length)) break;
        res = undefined;
      }
      if (!req || !res?.ok) {
        throw new HostError(ErrorCode.CONFLICT, 'the request kept changing; reload', { approval_id: approvalId });
      }
      const base = {
        approval_id: approvalId,
        endpoint_id: req.endpoint_id,
        device_id: req.device_id,
        capability_id: req.capability_id,
        session_id: req.session_id,
        ...(req.run_id ? { run_id: req.run_id, node_id: req.node_id } : {}),
      };
      try {
        if (res.partial) {
          await ledger.append(
            approvalEntry('vote', {
              ...base,
              decision: 'approve',
              method: req.method,
              principals: [{ kind: 'human', id: vote.principal.id, name: vote.principal.name }],
              input_digest: req.input_digest,
              decided_at: isoAt(clock.now()),
              votes: res.next.votes.length,
              principals_needed: req.principals_needed,
            }),
          );
        } else if (res.final) {
          await ledger.append(
            approvalEntry('decided', {
              ...base,
              ...res.final,
              principal_names:
                res.final.decision === 'deny' ? [vote.principal.name] : res.next.votes.map((v) => v.principal.name),
            }),
          );
        }
      } catch (err) {
        // Nothing is half-applied: without its ledger record the vote is undone (HOST-045, 093).
        await store.update(req, res.next.status, res.next.votes.length);
        throw toHostError(err, ErrorCode.HOST_LEDGER_UNAVAILABLE);
      }
      events?.emit('approval.updated', { approval: res.next });
      notify(approvalId);
      return res.next;
    },
  };
}
