import { Ajv2020 } from 'ajv/dist/2020.js';
import { ErrorCode, HostError, isJsonObject } from '../core/index.js';
import { v1Kind } from './run-context.js';
import type { PendingInterrupt } from './run-context.js';
import type { RunEventInput } from './types.js';

const ajv = new Ajv2020({ strict: false, allErrors: true });

const APPROVAL_FIELDS = ['comment', 'feedback', 'refineFeedback', 'editedArtifactData'] as const;

/**
 * Turns the body of `POST /v1/runs/{runId}/interrupts/{nodeId}` into the resume value.
 * Approval: `{action, comment?, feedback?, refineFeedback?, editedArtifactData?}` (or the same inside
 * `{resumeValue}`) where `action` must
 * be one the interrupt offers (`ask` is not supported here). Other kinds: `{resumeValue}` (or the
 * whole body), checked against the interrupt's `resumeSchema` when it has one.
 * Raises `validation_error` with `details.path`.
 */
export function resumeFromBody(p: PendingInterrupt, body: Record<string, unknown>): Record<string, unknown> {
  if (p.kind === 'approval') {
    // The uniform envelope `{resumeValue: {action, ...}}` (as the upstream conformance scenarios send) is accepted
    // too; its fields are then read from inside it.
    const wrapped = body.action === undefined && isJsonObject(body.resumeValue);
    if (wrapped) body = body.resumeValue as Record<string, unknown>;
    const at = wrapped ? '/resumeValue' : '';
    const offered = Array.isArray(p.data.actions) ? (p.data.actions as string[]) : ['accept', 'reject'];
    const action = body.action;
    if (typeof action !== 'string' || !offered.includes(action) || action === 'ask') {
      throw new HostError(ErrorCode.VALIDATION_ERROR, 'action must be one the approval offers', {
        path: `${at}/action`,
        allowed: offered.filter((a) => a !== 'ask'),
      });
    }
    if (action === 'edit-accept' && body.editedArtifactData === undefined) {
      throw new HostError(ErrorCode.VALIDATION_ERROR, 'edit-accept needs editedArtifactData', {
        path: `${at}/editedArtifactData`,
      });
    }
    if (action === 'refine' && (typeof body.refineFeedback !== 'object' || body.refineFeedback === null)) {
      throw new HostError(ErrorCode.VALIDATION_ERROR, 'refine needs refineFeedback', { path: `${at}/refineFeedback` });
    }
    // interrupt.md §RefineFeedback: `scope` is required (whole | section | items).
    const scope = action === 'refine' ? (body.refineFeedback as Record<string, unknown>).scope : 'whole';
    if (scope !== 'whole' && scope !== 'section' && scope !== 'items') {
      throw new HostError(ErrorCode.VALIDATION_ERROR, 'refineFeedback.scope must be whole, section or items', {
        path: `${at}/refineFeedback/scope`,
      });
    }
    const v: Record<string, unknown> = { action };
    for (const f of APPROVAL_FIELDS) if (body[f] !== undefined) v[f] = body[f];
    return v;
  }
  const value = 'resumeValue' in body ? body.resumeValue : body;
  if (p.resumeSchema) {
    const validate = ajv.compile(p.resumeSchema);
    if (!validate(value)) {
      throw new HostError(ErrorCode.VALIDATION_ERROR, 'resumeValue does not match the resumeSchema', {
        path: '/resumeValue',
        errors: (validate.errors ?? []).map((e) => ({ path: e.instancePath || '/', message: e.message ?? 'invalid' })),
      });
    }
  }
  return { resumeValue: value };
}

/**
 * An approval's top-level `action` on `interrupt.resolved` (interrupt.md §Events, RFC 0183 §A.1), a refine's
 * `refineFeedback` with it; a reject or a timeout also `decision: rejected`.
 */
function approvalOutcome(o: {
  kind: string;
  resumeValue: Record<string, unknown>;
  timedOut?: boolean;
}): Record<string, unknown> {
  if (o.kind !== 'approval') return {};
  if (o.timedOut) return { action: 'timeout', decision: 'rejected', reason: 'timeout' };
  const action = o.resumeValue.action;
  if (typeof action !== 'string') return {};
  if (action === 'reject') return { action, decision: 'rejected' };
  // RFC 0183 §A.2: a refine carries its structured feedback beside the action.
  const feedback = o.resumeValue.refineFeedback;
  return action === 'refine' && feedback !== undefined ? { action, refineFeedback: feedback } : { action };
}

/**
 * The events that record an interrupt's resolution, in order: `interrupt.resolved` (caused by the
 * `interrupt.requested`), `approval.received` for approvals, and `node.resumed`. A timeout resolves
 * with `{action: 'timeout'}` and, for approvals, the decision `rejected` (a timeout never grants).
 */
export function resolutionEvents(o: {
  nodeId: string;
  key: string;
  kind: string;
  resumeValue: Record<string, unknown>;
  decidedBy: string | null;
  at: string;
  causationId?: string;
  timedOut?: boolean;
}): RunEventInput[] {
  const { nodeId, key } = o;
  const inputs: RunEventInput[] = [
    {
      type: 'interrupt.resolved',
      nodeId,
      ...(o.causationId ? { causationId: o.causationId } : {}),
      payload: {
        nodeId,
        interruptId: key,
        ...v1Kind(o.kind),
        resumeValue: o.resumeValue,
        ...approvalOutcome(o),
        ...(o.timedOut ? { timedOut: true } : { decidedBy: o.decidedBy }),
      },
    },
  ];
  if (o.kind === 'approval' && typeof o.resumeValue.action === 'string') {
    inputs.push({
      type: 'approval.received',
      nodeId,
      // `interruptId` names the interrupt this decision resolved (the v2 payload is the unified interruptResolved one).
      payload: o.timedOut
        ? { nodeId, interruptId: key, action: 'timeout', decidedAt: o.at, decision: 'rejected', reason: 'timeout' }
        : {
            ...o.resumeValue,
            nodeId,
            interruptId: key,
            action: o.resumeValue.action,
            ...(o.decidedBy ? { decidedBy: o.decidedBy } : {}),
            decidedAt: o.at,
          },
    });
  }
  inputs.push({ type: 'node.resumed', nodeId, payload: { nodeId, interruptId: key } });
  return inputs;
}
