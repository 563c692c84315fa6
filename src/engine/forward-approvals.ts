/**
 * Approvals across host processes (issue 19): the endpoint's holder asks for the approval of a forwarded call, so its
 * policy gate raises `approval.requested` on the holder only. The holder announces it on the call's row (notice `p`)
 * and the sender raises the same operator events on its own bus, so what the sender shows for a local call waiting
 * for an operator (an `mhs.invoke` node's `waiting-approval` interrupt, the gateway's approval progress) it shows for
 * a forwarded one. Decisions stay in the shared approval store: any process may vote.
 */
import { ErrorCode, toHostError } from '../core/index.js';
import type { HostError } from '../core/index.js';
import type { ApprovalRequest, ApprovalStatus, OperatorEvents, PolicyGate } from '../policy/index.js';
import type { InvokeRequest } from './call-types.js';

/** What the relay needs of this process's policy layer. */
export interface ApprovalRelayDeps {
  events: Pick<OperatorEvents, 'emit' | 'subscribe'>;
  gate: Pick<PolicyGate, 'get' | 'list'>;
  onError?: (err: HostError) => void;
}

/**
 * Whether approval `r` is the one a governed call `c` waits for: its run and node (and its approval key when it names
 * one: an `mhs.task` step's, so two steps waiting side by side each relay only their own), else its approval key.
 */
function asksFor(r: ApprovalRequest, c: Pick<InvokeRequest, 'runId' | 'nodeId' | 'approvalKey' | 'deviceId'>): boolean {
  if (r.device_id !== c.deviceId) return false;
  if (c.runId)
    return r.run_id === c.runId && r.node_id === c.nodeId && (!c.approvalKey || r.request_key === c.approvalKey);
  return !!c.approvalKey && r.request_key === c.approvalKey;
}

/**
 * The holder's side, while it applies forwarded call `c`: every approval its gate asks for that call (or decides
 * here) is announced to the sender. Returns the unsubscribe.
 */
export function announceApprovals(
  deps: Pick<ApprovalRelayDeps, 'events' | 'onError'>,
  c: Pick<InvokeRequest, 'runId' | 'nodeId' | 'approvalKey' | 'deviceId'>,
  announce: (approvalId: string) => Promise<void>,
): () => void {
  return deps.events.subscribe((e) => {
    if (e.type !== 'approval.requested' && e.type !== 'approval.updated') return;
    const r = (e.data as { approval?: ApprovalRequest }).approval;
    if (!r || !asksFor(r, c)) return;
    // A lost notice only delays the sender to its next poll of the store.
    announce(r.approval_id).catch((err: unknown) =>
      deps.onError?.(toHostError(err, ErrorCode.HOST_LEDGER_UNAVAILABLE)),
    );
  });
}

/** Statuses an approval reaches only after it was approved. */
const AFTER_APPROVAL: ReadonlySet<ApprovalStatus> = new Set(['consumed', 'approved_not_executed']);

/**
 * The sender's side, for one forwarded call: raises on this process's bus each change of the approvals the holder
 * asked for it, as this process's gate would have. Fed by the holder's notices ({@link noted}) and, for a run's call,
 * by the store at every {@link relay} (a notice missed while the listen connection was down).
 */
export class SenderApprovals {
  /** The status last raised (or seen raised here) per approval. */
  private readonly shown = new Map<string, ApprovalStatus>();
  private readonly ids = new Set<string>();
  private readonly off: () => void;

  constructor(
    private readonly deps: ApprovalRelayDeps,
    private readonly call: InvokeRequest,
  ) {
    // A vote made here raised its own event: it is not raised twice.
    this.off = deps.events.subscribe((e) => {
      const r = (e.data as { approval?: ApprovalRequest }).approval;
      if (r && this.shown.has(r.approval_id)) this.shown.set(r.approval_id, r.status);
    });
  }

  /** The holder announced approval `id` for this call. */
  noted(id: string): void {
    this.ids.add(id);
  }

  /** Raises what changed since the last call. Never throws: a failed read is reported and retried next time. */
  async relay(): Promise<void> {
    try {
      const ids = new Set(this.ids);
      if (this.call.runId)
        for (const r of await this.deps.gate.list({ status: ['pending'] }))
          if (asksFor(r, this.call)) ids.add(r.approval_id);
      for (const id of ids) {
        const r = await this.deps.gate.get(id);
        if (r) this.raise(r);
      }
    } catch (err) {
      this.deps.onError?.(toHostError(err, ErrorCode.HOST_LEDGER_UNAVAILABLE));
    }
  }

  private raise(r: ApprovalRequest): void {
    const was = this.shown.get(r.approval_id);
    if (was === r.status) return;
    const emit = (type: 'approval.requested' | 'approval.updated', a: ApprovalRequest) => {
      this.shown.set(a.approval_id, a.status);
      this.deps.events.emit(type, { approval: a });
    };
    // First seen decided (its notice missed, decided before the next look): the call goes on; nothing to show.
    if (was === undefined && r.status !== 'pending') {
      this.shown.set(r.approval_id, r.status);
      return;
    }
    if (was === undefined) emit('approval.requested', r);
    // Decided and already used by the holder between two looks: raised as the approval it was first (a watcher
    // reads `consumed` as no approval at all).
    if (AFTER_APPROVAL.has(r.status) && this.shown.get(r.approval_id) === 'pending')
      emit('approval.updated', { ...r, status: 'approved' });
    if (r.status !== 'pending') emit('approval.updated', r);
  }

  /** Stops following this process's own approval events. */
  close(): void {
    this.off();
  }
}
