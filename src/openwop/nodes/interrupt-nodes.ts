import { NodeFailure } from '../node-registry.js';
import type { NodeContext, NodeModule, NodeResult } from '../node-registry.js';

const APPROVAL_ACTIONS = new Set(['accept', 'reject', 'refine', 'edit-accept']);

/** The approval actions a gate offers (`config.actions`, default accept and reject). */
export function approvalActions(config: Record<string, unknown>): string[] {
  const a = Array.isArray(config.actions) ? config.actions.filter((x): x is string => typeof x === 'string') : [];
  return a.length ? a : ['accept', 'reject'];
}

function str(v: unknown, fallback: string): string {
  return typeof v === 'string' && v.length > 0 ? v : fallback;
}

/**
 * Suspends on an approval interrupt and maps the decision: accept / edit-accept / refine complete
 * the node; reject and a timeout (which never grants, whatever `onTimeout` says) fail it with
 * `approval_rejected`, so an `any_failed` edge can route it.
 */
export async function approvalWait(ctx: NodeContext, data: Record<string, unknown> = {}): Promise<NodeResult> {
  const c = ctx.node.config;
  const actions = approvalActions(c);
  const outcome = await ctx.interrupt({
    kind: 'approval',
    data: {
      artifactId: str(c.artifactId, `${ctx.runId}:${ctx.node.id}`),
      artifactType: str(c.artifactType, 'approval'),
      title: str(c.title, ctx.node.name),
      ...(typeof c.description === 'string' ? { description: c.description } : {}),
      actions,
      ...data,
    },
    ...(typeof c.timeoutMs === 'number' && c.timeoutMs > 0 ? { timeoutMs: c.timeoutMs } : {}),
  });
  if (outcome.timedOut) {
    throw new NodeFailure(
      'approval_rejected',
      'the approval timed out',
      { reason: 'timeout' },
      {
        decision: 'rejected',
        reason: 'timeout',
      },
    );
  }
  const v = outcome.resumeValue;
  if (v.action === 'reject') {
    throw new NodeFailure(
      'approval_rejected',
      'the approval was rejected',
      { decidedBy: outcome.decidedBy },
      {
        decision: 'rejected',
      },
    );
  }
  return { outputs: { ...v, approved: true, decidedBy: outcome.decidedBy } };
}

/** `core.approvalGate`: an approval interrupt resolved through `POST /v1/runs/{runId}/interrupts/{nodeId}`. */
export const approvalGateNode: NodeModule = {
  typeId: 'core.approvalGate',
  validate: (node) => [
    ...(approvalActions(node.config).every((a) => APPROVAL_ACTIONS.has(a))
      ? []
      : [{ path: '/config/actions', message: 'actions must be among accept, reject, refine, edit-accept' }]),
    // A quorum gate (interrupt-profiles.md openwop-interrupt-quorum) is refused, not run as a single approval.
    ...(typeof node.config.requiredApprovals === 'number' && node.config.requiredApprovals > 1
      ? [{ path: '/config/requiredApprovals', message: 'quorum approvals are not supported on this host' }]
      : []),
  ],
  execute: (ctx) => approvalWait(ctx),
};

/**
 * `core.interrupt`: a generic interrupt (`config.kind` clarification, external-event or custom;
 * `approval` behaves as `core.approvalGate`). Outputs the resume value.
 */
export const interruptNode: NodeModule = {
  typeId: 'core.interrupt',
  async execute(ctx) {
    const c = ctx.node.config;
    const kind = c.kind === 'clarification' || c.kind === 'external-event' || c.kind === 'approval' ? c.kind : 'custom';
    if (kind === 'approval') return approvalWait(ctx);
    const data =
      c.data && typeof c.data === 'object'
        ? (c.data as Record<string, unknown>)
        : { customKind: str(c.customKind, 'input'), ...(c.payload !== undefined ? { payload: c.payload } : {}) };
    const outcome = await ctx.interrupt({
      kind,
      data,
      ...(typeof c.timeoutMs === 'number' && c.timeoutMs > 0 ? { timeoutMs: c.timeoutMs } : {}),
      ...(c.resumeSchema && typeof c.resumeSchema === 'object'
        ? { resumeSchema: c.resumeSchema as Record<string, unknown> }
        : {}),
    });
    if (outcome.timedOut) throw new NodeFailure('interrupt_timeout', 'the interrupt timed out');
    return {
      outputs: { resumeValue: outcome.resumeValue.resumeValue ?? outcome.resumeValue, decidedBy: outcome.decidedBy },
    };
  },
};

/** The `{id, question}` entries of a clarification gate's config. */
function questionsOf(config: Record<string, unknown>): Array<{ id: string; question: string }> {
  const qs = Array.isArray(config.questions) ? config.questions : [];
  return qs.filter(
    (q): q is { id: string; question: string } =>
      typeof q === 'object' && q !== null && typeof q.id === 'string' && q.id !== '' && typeof q.question === 'string',
  );
}

/**
 * `core.clarificationGate` (conformance fixtures.md `conformance-clarification`): suspends the run `waiting-input` on
 * a clarification interrupt asking `config.questions`; resumed with `{answers: {<question id>: string}}` (every
 * question answered, checked before the run moves on), it completes with those answers as its outputs.
 */
export const clarificationGateNode: NodeModule = {
  typeId: 'core.clarificationGate',
  validate: (node) =>
    questionsOf(node.config).length > 0 &&
    questionsOf(node.config).length === (node.config.questions as unknown[]).length
      ? []
      : [{ path: '/config/questions', message: 'must be a non-empty array of {id, question}' }],
  async execute(ctx) {
    const questions = questionsOf(ctx.node.config);
    const ids = questions.map((q) => q.id);
    const outcome = await ctx.interrupt({
      kind: 'clarification',
      data: { questions },
      resumeSchema: {
        type: 'object',
        required: ['answers'],
        properties: {
          answers: {
            type: 'object',
            required: ids,
            properties: Object.fromEntries(ids.map((id) => [id, { type: 'string' }])),
          },
        },
      },
    });
    if (outcome.timedOut) throw new NodeFailure('interrupt_timeout', 'the clarification timed out');
    const value = (outcome.resumeValue.resumeValue ?? outcome.resumeValue) as { answers?: unknown };
    return { outputs: { answers: value.answers, decidedBy: outcome.decidedBy } };
  },
};
