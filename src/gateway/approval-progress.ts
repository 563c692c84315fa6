/**
 * Progress of one gateway tool call while it runs (issue 14: MCP progress notifications while a call waits for
 * an operator): every `everyMs` a `notifications/progress` naming what the call waits for, and one at once when
 * the host asks an operator to approve it. An approval is recognised by the call's approval key, so a repeated
 * call that reuses an open approval is reported too.
 */
import type { Clock, TimerHandle } from '../core/index.js';
import type { ApprovalRequest } from '../policy/approval-rules.js';
import type { ApprovalStore } from '../policy/approval-store.js';
import type { OperatorEvents } from '../policy/operator-events.js';

/** Sends one progress notification (the MCP request's `notify`, bound to its progress token). */
export type ProgressSink = (p: { progress: number; total?: number; message: string }) => Promise<void>;

/** What {@link reportProgress} watches. */
export interface ProgressWatch {
  clock: Clock;
  events: Pick<OperatorEvents, 'subscribe'>;
  store: Pick<ApprovalStore, 'openByKey'>;
  /** The call's approval key (`InvokeRequest.approvalKey`). */
  key: string;
  sink: ProgressSink;
  everyMs: number;
  /** How long the call waits for an approval at most, for the message. */
  limitMs: number;
  /** Where failed notifications go (a closed stream); they never fail the call. */
  onError?: (err: unknown) => void;
}

/** Starts reporting; returns the function that stops it. */
export function reportProgress(w: ProgressWatch): () => void {
  const started = w.clock.now();
  let approval: ApprovalRequest | undefined;
  let timer: TimerHandle | undefined;
  let stopped = false;
  let sent = 0;

  const send = (): void => {
    if (stopped) return;
    const waited = w.clock.now() - started;
    const message =
      approval && approval.status === 'pending'
        ? `waiting for operator approval ${approval.approval_id} of ${approval.capability_id} on ${approval.device_id} (${Math.round(waited / 1000)} s of at most ${Math.round(w.limitMs / 1000)} s)`
        : `in progress (${Math.round(waited / 1000)} s)`;
    // `progress` must grow with every notification of a token.
    sent += 1;
    w.sink({ progress: sent, message }).catch((e: unknown) => w.onError?.(e));
  };
  const tick = (): void => {
    if (stopped) return;
    void w.store.openByKey(w.key).then(
      (open) => {
        approval = open.find((a) => a.status === 'pending') ?? approval;
        send();
        if (!stopped) timer = w.clock.setTimeout(tick, w.everyMs);
      },
      (e: unknown) => {
        w.onError?.(e);
        if (!stopped) timer = w.clock.setTimeout(tick, w.everyMs);
      },
    );
  };
  const off = w.events.subscribe((e) => {
    const a = e.data.approval as ApprovalRequest | undefined;
    if (e.type === 'approval.requested' && a?.request_key === w.key) {
      approval = a;
      send();
    }
  });
  timer = w.clock.setTimeout(tick, w.everyMs);
  return () => {
    stopped = true;
    off();
    if (timer) w.clock.clearTimeout(timer);
  };
}
