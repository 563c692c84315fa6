import { ErrorCode } from '../core/index.js';
import type { CallGate, GateDecision, GovernedCallContext } from '../policy/call-gate.js';

/**
 * The minimal policy step used until the policy layer injects its own {@link CallGate} (deny by default,
 * HOST-043): the connector must be enabled, the session open, no interlock `open` or `unknown`, and only
 * R0/R1 capabilities that need no permit are allowed without an approval.
 */
export const defaultCallGate: CallGate = {
  async authorize(ctx: GovernedCallContext): Promise<GateDecision> {
    if (!ctx.connectorEnabled)
      return {
        kind: 'deny',
        code: ErrorCode.HOST_CONNECTOR_DISABLED,
        message: `connector ${ctx.connectorId} is disabled`,
      };
    if (ctx.session.state !== 'open')
      return { kind: 'deny', code: ErrorCode.SESSION_EXPIRED, message: `session is ${ctx.session.state}` };
    const interlocks = ctx.safety?.interlocks ?? ctx.device.interlocks;
    for (const il of interlocks) {
      if (il.state === 'unknown')
        return {
          kind: 'deny',
          code: ErrorCode.SAFETY_INTERLOCK_UNKNOWN,
          message: `interlock ${il.id} is unknown`,
          details: { interlock: il.id },
        };
      if (il.state === 'open')
        return {
          kind: 'deny',
          code: ErrorCode.SAFETY_INTERLOCK_OPEN,
          message: `interlock ${il.id} is open`,
          details: { interlock: il.id },
        };
    }
    if (ctx.binding.permit.required || (ctx.binding.risk_class !== 'R0' && ctx.binding.risk_class !== 'R1'))
      return {
        kind: 'deny',
        code: ErrorCode.HOST_APPROVAL_REQUIRED,
        message: `${ctx.binding.capability_id} (${ctx.binding.risk_class}) needs an approval and a permit`,
        details: { risk_class: ctx.binding.risk_class, permit_required: ctx.binding.permit.required },
      };
    return { kind: 'allow' };
  },
};
