import { ErrorCode, HostError } from '../../core/index.js';
import type { ApprovalRequest, OperatorEvents, PolicyGate } from '../../policy/index.js';
import type { NodeContext } from '../node-registry.js';

/** The policy layer's approval surface, as the MHS nodes use it. */
export interface MhsApprovals {
  events: Pick<OperatorEvents, 'subscribe'>;
  gate: Pick<PolicyGate, 'vote' | 'list'> & Partial<Pick<PolicyGate, 'voidOpen'>>;
}

/** A node's watch on its approvals ({@link watchApprovals}). */
export interface ApprovalWatch {
  stop(): void;
  /** True while an approval of this node is undecided. */
  waiting(): boolean;
}

/** What a node adds to an approval's interrupt: an `mhs.task` names the step that waits. */
export interface ApprovalLabel {
  /** Prefixed to the interrupt's title. */
  title?: string;
  /** Merged into the interrupt's `data`. */
  data?: Record<string, unknown>;
}

type Handle = Awaited<ReturnType<NodeContext['externalInterrupt']>>;

/**
 * While a governed call of this node waits for an operator, shows the wait as an approval
 * interrupt (run status `waiting-approval`). The REST interrupt route forwards an operator's
 * accept/reject to the policy gate as a vote (client tokens are refused: only operators decide);
 * the console decides through the operator API directly. Either way the decision is recorded on the
 * run when the gate settles. `label` (read when the approval is first seen) names what waits, e.g. a task's step.
 */
export function watchApprovals(
  ctx: NodeContext,
  a: MhsApprovals,
  label: (r: ApprovalRequest) => ApprovalLabel | undefined = () => undefined,
): ApprovalWatch {
  const undecided = new Set<string>();
  const handles = new Map<string, Promise<Handle>>();
  const mine = (r: ApprovalRequest | undefined): r is ApprovalRequest =>
    !!r && r.run_id === ctx.runId && r.node_id === ctx.node.id;
  let chain: Promise<unknown> = Promise.resolve();
  const later = (fn: () => Promise<unknown>): void => {
    chain = chain.then(fn).catch(() => undefined);
  };

  const open = (r: ApprovalRequest, l: ApprovalLabel | undefined): Promise<Handle> => {
    let h = handles.get(r.approval_id);
    if (!h) {
      h = ctx.externalInterrupt(
        {
          kind: 'approval',
          key: `mhs:${r.approval_id}`,
          data: {
            artifactId: r.approval_id,
            artifactType: 'mhs.approval',
            title: `${l?.title ? `${l.title}: ` : ''}${r.capability_id} on ${r.device_id} (${r.risk_class})`,
            description: `input digest ${r.input_digest}; decide in the console or with an operator token`,
            actions: ['accept', 'reject'],
            ...l?.data,
          },
        },
        async (body, by) => {
          if (by.role !== 'operator') {
            throw new HostError(ErrorCode.FORBIDDEN, 'an MHS approval needs an operator token', {
              role: by.role ?? null,
            });
          }
          await a.gate.vote(r.approval_id, {
            principal: { kind: 'human', id: by.principal, name: by.name ?? by.principal },
            decision: body.action === 'accept' ? 'approve' : 'deny',
          });
        },
      );
      handles.set(r.approval_id, h);
    }
    return h;
  };

  const settle = async (r: ApprovalRequest, l: ApprovalLabel | undefined): Promise<void> => {
    if (r.status === 'pending') return;
    undecided.delete(r.approval_id);
    const h = await open(r, l);
    const by = r.votes.at(-1)?.principal.id ?? null;
    await h.settled({ action: r.status === 'approved' ? 'accept' : 'reject', approvalStatus: r.status }, by);
  };

  const off = a.events.subscribe((e) => {
    const r = (e.data as { approval?: ApprovalRequest }).approval;
    if (!mine(r)) return;
    // Read now, while the step that asked is still the one in flight.
    const l = handles.has(r.approval_id) ? undefined : label(r);
    if (r.status === 'pending') undecided.add(r.approval_id);
    if (e.type === 'approval.requested' && r.status === 'pending') later(() => open(r, l));
    else if (e.type === 'approval.updated' || e.type === 'approval.requested') later(() => settle(r, l));
  });
  // An approval requested before a restart is still pending: show it again.
  later(async () => {
    for (const r of await a.gate.list({ status: ['pending'] })) {
      if (!mine(r)) continue;
      undecided.add(r.approval_id);
      await open(r, label(r));
    }
  });
  return { stop: off, waiting: () => undecided.size > 0 };
}

/**
 * Issue 16: cancelling the run voids this node's approval still waiting (recorded, so it can no longer be granted)
 * and aborts `abort`. A call already approved (or needing none) is aborted only with `abortAlways` (a task stops
 * there); otherwise it settles and its receipt is recorded (never abandoned). `release()` detaches and waits for
 * the voiding.
 */
export function withdrawOnCancel(
  ctx: NodeContext,
  a: MhsApprovals | undefined,
  watch: ApprovalWatch | undefined,
  abort: AbortController,
  opts: { abortAlways?: boolean } = {},
): { release(): Promise<void> } {
  let voiding: Promise<unknown> = Promise.resolve();
  const gate = a?.gate;
  const withdraw = (): void => {
    if (gate?.voidOpen) voiding = gate.voidOpen({ runId: ctx.runId, nodeId: ctx.node.id }, 'run_cancelled');
    abort.abort();
  };
  const onCancel = (): void => {
    if (watch?.waiting()) return withdraw();
    // Issue 19: a call forwarded to its endpoint's holder waits for an approval that process asked for; this
    // process may have no event of it yet, only the store.
    // (Not `return voiding` from inside: that would be this very promise, waiting on itself for ever.)
    if (gate)
      voiding = gate
        .list({ status: ['pending'] })
        .then((open) => {
          if (!open.some((r) => r.run_id === ctx.runId && r.node_id === ctx.node.id)) return undefined;
          withdraw();
          return voiding;
        })
        .catch(() => undefined);
    if (opts.abortAlways) abort.abort();
  };
  if (ctx.signal.aborted) onCancel();
  else ctx.signal.addEventListener('abort', onCancel);
  return {
    async release() {
      ctx.signal.removeEventListener('abort', onCancel);
      await voiding;
    },
  };
}
