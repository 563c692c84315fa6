import { ErrorCode, HostError } from '../../core/index.js';
import type { ApprovalRequest, OperatorEvents, PolicyGate } from '../../policy/index.js';
import type { NodeContext } from '../node-registry.js';

/** The policy layer's approval surface, as the MHS nodes use it. */
export interface MhsApprovals {
  events: Pick<OperatorEvents, 'subscribe'>;
  gate: Pick<PolicyGate, 'vote' | 'list'> & Partial<Pick<PolicyGate, 'voidOpen'>>;
}

type Handle = Awaited<ReturnType<NodeContext['externalInterrupt']>>;

/**
 * While a governed call of this node waits for an operator, shows the wait as an approval
 * interrupt (run status `waiting-approval`). The REST interrupt route forwards an operator's
 * accept/reject to the policy gate as a vote (client tokens are refused: only operators decide);
 * the console decides through the operator API directly. Either way the decision is recorded on the
 * run when the gate settles. `waiting()` is true while an approval of this node is undecided.
 */
export function watchApprovals(ctx: NodeContext, a: MhsApprovals): { stop(): void; waiting(): boolean } {
  const undecided = new Set<string>();
  const handles = new Map<string, Promise<Handle>>();
  const mine = (r: ApprovalRequest | undefined): r is ApprovalRequest =>
    !!r && r.run_id === ctx.runId && r.node_id === ctx.node.id;
  let chain: Promise<unknown> = Promise.resolve();
  const later = (fn: () => Promise<unknown>): void => {
    chain = chain.then(fn).catch(() => undefined);
  };

  const open = (r: ApprovalRequest): Promise<Handle> => {
    let h = handles.get(r.approval_id);
    if (!h) {
      h = ctx.externalInterrupt(
        {
          kind: 'approval',
          key: `mhs:${r.approval_id}`,
          data: {
            artifactId: r.approval_id,
            artifactType: 'mhs.approval',
            title: `${r.capability_id} on ${r.device_id} (${r.risk_class})`,
            description: `input digest ${r.input_digest}; decide in the console or with an operator token`,
            actions: ['accept', 'reject'],
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

  const settle = async (r: ApprovalRequest): Promise<void> => {
    if (r.status === 'pending') return;
    undecided.delete(r.approval_id);
    const h = await open(r);
    const by = r.votes.at(-1)?.principal.id ?? null;
    await h.settled({ action: r.status === 'approved' ? 'accept' : 'reject', approvalStatus: r.status }, by);
  };

  const off = a.events.subscribe((e) => {
    const r = (e.data as { approval?: ApprovalRequest }).approval;
    if (!mine(r)) return;
    if (r.status === 'pending') undecided.add(r.approval_id);
    if (e.type === 'approval.requested' && r.status === 'pending') later(() => open(r));
    else if (e.type === 'approval.updated' || e.type === 'approval.requested') later(() => settle(r));
  });
  // An approval requested before a restart is still pending: show it again.
  later(async () => {
    for (const r of await a.gate.list({ status: ['pending'] })) {
      if (!mine(r)) continue;
      undecided.add(r.approval_id);
      await open(r);
    }
  });
  return { stop: off, waiting: () => undecided.size > 0 };
}
