import { ErrorCode } from '../core/index.js';
import type { RiskClass } from '../mhs/wire-types.js';
import type { GovernedCallContext } from './call-gate.js';
import type { PolicyConfig, PolicyRule } from './policy-config.js';

/** Approval methods, recorded exactly as used (HOST-044). */
export type ApprovalMethod = 'human_click' | 'policy_rule' | 'dual_control';

/** What policy decides for one call, before any approval exists. Pure data; nothing is executed. */
export type PolicyOutcome =
  | { kind: 'refuse'; code: ErrorCode; reason: string; details?: Record<string, unknown> }
  /** No approval needed (below the approval threshold and no permit required). */
  | { kind: 'allow'; risk: RiskClass }
  /** A policy rule approves (never above the auto-approval ceiling: HOST-032). */
  | { kind: 'policy_approve'; risk: RiskClass; rule: PolicyRule; permitRequired: boolean }
  /** A human must decide: one principal, or two distinct ones for `dual_control` (HOST-035, 044). */
  | {
      kind: 'ask_human';
      risk: RiskClass;
      method: 'human_click' | 'dual_control';
      principalsNeeded: 1 | 2;
      permitRequired: boolean;
    };

const RISK_ORDER: readonly RiskClass[] = ['R0', 'R1', 'R2', 'R3'];
const CL_ORDER = ['CL1', 'CL2', 'CL3', 'CL4', 'CL5'];

/** Rank of a risk class, or -1 when it is not one of R0..R3 (unknown: refuse, HOST-043). */
export function riskRank(risk: unknown): number {
  return RISK_ORDER.indexOf(risk as RiskClass);
}

/**
 * The highest risk class a policy rule may approve under `cfg`: the configured ceiling, but never
 * R2 or above when the host claims CL3 or higher (HOST-032). `null` when policy approval is off.
 */
export function autoApproveCeiling(cfg: PolicyConfig): RiskClass | null {
  if (cfg.autoApproveUpTo === null || riskRank(cfg.autoApproveUpTo) < 0) return null;
  const atLeastCl3 = CL_ORDER.indexOf(cfg.conformance) >= CL_ORDER.indexOf('CL3');
  if (atLeastCl3 && riskRank(cfg.autoApproveUpTo) > riskRank('R1')) return 'R1';
  return cfg.autoApproveUpTo;
}

function ruleMatches(rule: PolicyRule, ctx: GovernedCallContext): boolean {
  return (
    (rule.endpoint_id === undefined || rule.endpoint_id === ctx.endpointId) &&
    (rule.device_id === undefined || rule.device_id === ctx.device.device_id) &&
    (rule.capability_id === undefined || rule.capability_id === ctx.binding.capability_id)
  );
}

const refuse = (code: ErrorCode, reason: string, details?: Record<string, unknown>): PolicyOutcome =>
  details ? { kind: 'refuse', code, reason, details } : { kind: 'refuse', code, reason };

/**
 * The safety part of the decision: an `unknown` interlock refuses any call; an `open` interlock or
 * an engaged e-stop refuses an effectful one. The fresher `mhs__safety` read wins over the manifest.
 * Null when safe. Re-checked after an approval wait, since the device may have changed meanwhile.
 */
export function safetyRefusal(ctx: GovernedCallContext): Extract<PolicyOutcome, { kind: 'refuse' }> | null {
  const interlocks = ctx.safety?.interlocks ?? ctx.device?.interlocks ?? [];
  const effectful = ctx.binding?.effect !== 'read';
  for (const il of interlocks) {
    if (il.state === 'unknown' || !['open', 'closed'].includes(il.state)) {
      return {
        kind: 'refuse',
        code: ErrorCode.SAFETY_INTERLOCK_UNKNOWN,
        reason: 'interlock_unknown',
        details: { interlock: il.id },
      };
    }
    if (il.state === 'open' && effectful) {
      return {
        kind: 'refuse',
        code: ErrorCode.SAFETY_INTERLOCK_OPEN,
        reason: 'interlock_open',
        details: { interlock: il.id },
      };
    }
  }
  if (ctx.safety?.estop?.engaged && effectful) {
    return {
      kind: 'refuse',
      code: ErrorCode.SAFETY_ESTOP_ACTIVE,
      reason: 'estop_engaged',
      details: { device_id: ctx.device?.device_id },
    };
  }
  return null;
}

/**
 * Decides one governed call from data alone (architecture.md step 2). Deny by default: an
 * unavailable policy (`cfg` null), a disabled connector, an expired session, an unknown or open
 * interlock, an engaged e-stop, or an unknown risk class or mode refuses (HOST-043).
 */
export function decideCall(ctx: GovernedCallContext, cfg: PolicyConfig | null, now: number): PolicyOutcome {
  if (!cfg) return refuse(ErrorCode.HOST_POLICY_DENIED, 'policy_unavailable');
  if (!ctx.connectorEnabled) {
    return refuse(ErrorCode.HOST_CONNECTOR_DISABLED, 'connector_disabled', { endpoint_id: ctx.endpointId });
  }
  const deviceRisk = riskRank(ctx.device?.risk_class);
  const bindingRisk = riskRank(ctx.binding?.risk_class);
  if (deviceRisk < 0 || bindingRisk < 0) {
    return refuse(ErrorCode.HOST_POLICY_DENIED, 'unknown_risk_class', {
      device_risk: ctx.device?.risk_class ?? null,
      binding_risk: ctx.binding?.risk_class ?? null,
    });
  }
  if (!['simulated', 'hybrid', 'hardware'].includes(ctx.device.mode)) {
    return refuse(ErrorCode.HOST_POLICY_DENIED, 'unknown_mode', { mode: ctx.device.mode ?? null });
  }
  if (!ctx.session || ctx.session.state !== 'open' || !(ctx.session.expiresAt > now)) {
    return refuse(ErrorCode.SESSION_EXPIRED, 'session_not_open', {
      session_id: ctx.session?.sessionId ?? null,
      state: ctx.session?.state ?? null,
    });
  }
  const unsafe = safetyRefusal(ctx);
  if (unsafe) return unsafe;

  const risk = RISK_ORDER[Math.max(deviceRisk, bindingRisk)] as RiskClass;
  const permitRequired = ctx.binding.permit?.required === true;
  const kind = ctx.binding.permit?.approval;
  if (kind !== undefined && !['human', 'policy', 'dual'].includes(kind)) {
    return refuse(ErrorCode.HOST_POLICY_DENIED, 'unknown_approval_kind', { approval: kind });
  }
  const needsApproval = permitRequired || riskRank(risk) >= riskRank(cfg.requireApprovalFrom);
  if (!needsApproval) return { kind: 'allow', risk };

  // dual: two distinct humans; R3 always needs a human (HOST-035, 044).
  if (kind === 'dual') return { kind: 'ask_human', risk, method: 'dual_control', principalsNeeded: 2, permitRequired };
  const ceiling = autoApproveCeiling(cfg);
  if (kind === 'policy' && risk !== 'R3' && ceiling !== null && riskRank(risk) <= riskRank(ceiling)) {
    const rule = cfg.rules.find((r) => ruleMatches(r, ctx));
    if (rule) return { kind: 'policy_approve', risk, rule, permitRequired };
  }
  return { kind: 'ask_human', risk, method: 'human_click', principalsNeeded: 1, permitRequired };
}
