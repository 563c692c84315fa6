/**
 * The governed command (issue 16 item 1, HOST-020, 070, 091): one owner for a command's lifecycle
 * validated → authorised → journalled → sent → running → settled | unknown → reconciling → settled.
 *
 * A pure reducer, `transition(state, event) → [next, effects]`, not an XState machine: the lifecycle is linear,
 * every event is the observed result of one I/O the engine ran, and there are no child actors or delays of its
 * own; the reducer's state is its own persisted snapshot (plain JSON, also what recovery rebuilds from the
 * ledger), and the property test drives thousands of interleavings synchronously. Effects are data: the engine
 * (src/engine/command-actor.ts) runs them. Deadlines are data too: `settleAt` and `reconcileAt` are absolute
 * times in the state, and `restore` re-arms them, because timers do not survive a restart.
 *
 * The device gate and the permit are derived from the state ({@link commandGate}, {@link commandPermit}), never
 * kept beside it; `gate.shut`/`gate.open` effects report each change of the derived gate.
 *
 * The reconcile rule (issue 16): "no record" at the endpoint concludes `not_executed` only once `settleAt`
 * (send time + deadline + transport margin) has passed; before that the command stays `unknown` and a
 * reconciliation is re-armed at `settleAt`, since a conforming endpoint may still execute it.
 */
import type {
  CommandEffect,
  CommandEvent,
  CommandGate,
  CommandInit,
  CommandPermit,
  CommandReceiptStatus,
  CommandState,
} from './governed-command-types.js';
import { FINAL_RECEIPT_STATUSES } from './governed-command-types.js';

export * from './governed-command-types.js';

/** A validated command, before policy and approval. */
export function initialCommand(init: CommandInit): CommandState {
  return {
    status: 'validated',
    commandId: null,
    deviceId: init.deviceId,
    effectful: init.effectful,
    permitId: null,
    intentDurable: false,
    deadlineMs: init.deadlineMs,
    marginMs: init.marginMs,
    sentAt: null,
    settleAt: null,
    reconcileAt: null,
    operationId: null,
    lastStatus: null,
    askedAt: null,
    resumeTo: null,
    outcome: null,
  };
}

/**
 * A command journalled by an earlier host process whose outcome is not settled (start-up recovery, or a gate
 * taken over from a process that is gone): `journalled` with a durable intent, to be given `restore`. `sentAt`
 * must be an upper bound of its send (issue 16): the deadline rule measured from an earlier time could conclude
 * `not_executed` while a conforming endpoint may still execute it.
 */
export function journalledCommand(
  init: CommandInit & { commandId: string; permitId?: string | null; sentAt?: number | null },
  extra: { operationId?: string | null; lastStatus?: CommandReceiptStatus | null; reconcileAt?: number | null } = {},
): CommandState {
  const sentAt = init.sentAt ?? null;
  return {
    ...initialCommand(init),
    status: 'journalled',
    commandId: init.commandId,
    permitId: init.permitId ?? null,
    intentDurable: true,
    sentAt,
    settleAt: sentAt === null ? null : sentAt + init.deadlineMs + init.marginMs,
    reconcileAt: extra.reconcileAt ?? null,
    operationId: extra.operationId ?? null,
    lastStatus: extra.lastStatus ?? null,
  };
}

/** Whether `s` is final (completed, rejected, failed). */
export function isFinalStatus(s: CommandReceiptStatus): boolean {
  return FINAL_RECEIPT_STATUSES.has(s);
}

/** The device gate the command holds (HOST-091): shut from the intent until its outcome is known. */
export function commandGate(s: CommandState): CommandGate {
  if (!s.effectful) return { status: 'open' };
  switch (s.status) {
    case 'journalled':
    case 'sent':
      return { status: 'shut', reason: 'in_flight' };
    case 'running':
      return { status: 'shut', reason: 'running' };
    case 'unknown':
      return { status: 'shut', reason: 'unknown' };
    case 'reconciling':
      return { status: 'shut', reason: s.resumeTo ?? 'unknown' };
    default:
      return { status: 'open' };
  }
}

/** The permit of the command (HOST-070): used once its intent is durable, revoked when it never got that far. */
export function commandPermit(s: CommandState): CommandPermit {
  if (!s.permitId) return { status: 'none' };
  if (s.intentDurable) return { status: 'used', permitId: s.permitId };
  if (s.status === 'settled') return { status: 'revoked', permitId: s.permitId };
  return { status: 'issued', permitId: s.permitId };
}

/** Whether the outcome is still open: in flight, running, unknown or being reconciled. */
export function isUnsettled(s: CommandState): boolean {
  return (
    s.status === 'journalled' ||
    s.status === 'sent' ||
    s.status === 'running' ||
    s.status === 'unknown' ||
    s.status === 'reconciling'
  );
}

/**
 * Decides: the next state and the effects to run. Executes nothing. An event that does not apply in the current
 * state changes nothing (`[s, []]`).
 */
export function transition(s: CommandState, e: CommandEvent): [CommandState, CommandEffect[]] {
  const [next, fx] = decide(s, e);
  if (next === s) return [s, fx];
  return [next, [...gateChange(s, next), ...fx]];
}

/** Folds `events` from `s`, collecting every effect (tests and replays). */
export function transitionAll(s: CommandState, events: readonly CommandEvent[]): [CommandState, CommandEffect[]] {
  const all: CommandEffect[] = [];
  let cur = s;
  for (const e of events) {
    const [n, fx] = transition(cur, e);
    cur = n;
    all.push(...fx);
  }
  return [cur, all];
}

function gateChange(prev: CommandState, next: CommandState): CommandEffect[] {
  const a = commandGate(prev);
  const b = commandGate(next);
  const commandId = next.commandId ?? '';
  if (b.status === 'shut' && (a.status === 'open' || a.reason !== b.reason))
    return [{ type: 'gate.shut', deviceId: next.deviceId, commandId, reason: b.reason }];
  if (b.status === 'open' && a.status === 'shut') return [{ type: 'gate.open', deviceId: next.deviceId, commandId }];
  return [];
}

const NONE: CommandEffect[] = [];

function decide(s: CommandState, e: CommandEvent): [CommandState, CommandEffect[]] {
  const id = s.commandId ?? '';
  switch (s.status) {
    case 'validated':
      if (e.type === 'authorise') return [{ ...s, status: 'authorised', permitId: e.permitId }, NONE];
      if (e.type === 'refuse') return refused(s, e.code);
      return [s, NONE];
    case 'authorised':
      if (e.type === 'refuse') return refused(s, e.code);
      if (e.type === 'journal')
        return [
          { ...s, status: 'journalled', commandId: e.commandId },
          [{ type: 'journalIntent', commandId: e.commandId }],
        ];
      return [s, NONE];
    case 'journalled':
      if (!s.intentDurable) {
        if (e.type === 'journal.done') {
          const fx: CommandEffect[] = s.permitId ? [{ type: 'permit.used', permitId: s.permitId }] : [];
          fx.push({ type: 'send', commandId: id, deadlineMs: s.deadlineMs, timeoutMs: s.deadlineMs + s.marginMs });
          return [{ ...s, intentDurable: true }, fx];
        }
        if (e.type === 'journal.failed') return refused(s, e.code, 'not_sent');
        if (e.type === 'restore') return restored(s, e);
        return [s, NONE];
      }
      if (e.type === 'sent')
        return [{ ...s, status: 'sent', sentAt: e.at, settleAt: e.at + s.deadlineMs + s.marginMs }, NONE];
      return afterSend(s, e);
    case 'sent':
      return afterSend(s, e);
    case 'running':
      if (e.type === 'reply.receipt') return onReceipt(s, e.status, e.operationId, true);
      if (e.type === 'follow.ended') return [s, NONE];
      if (e.type === 'record.failed') return [{ ...s, status: 'unknown' }, NONE];
      if (e.type === 'reconcile') return startReconcile(s, e.at);
      if (e.type === 'restore') return restored(s, e);
      return [s, NONE];
    case 'unknown':
      if (e.type === 'reconcile') return startReconcile(s, e.at);
      if (e.type === 'restore') return restored(s, e);
      return [s, NONE];
    case 'reconciling':
      return reconciling(s, e);
    case 'settled':
      // A receipt that could not be made durable: the device is observed again before another command (HOST-091).
      if (e.type === 'record.failed' && s.outcome?.kind === 'receipt' && s.outcome.via === 'call')
        return [{ ...s, status: 'unknown', outcome: null }, NONE];
      return [s, NONE];
  }
}

function refused(
  s: CommandState,
  code: string,
  kind: 'refused' | 'not_sent' = 'refused',
): [CommandState, CommandEffect[]] {
  const next: CommandState = { ...s, status: 'settled', outcome: { kind, code } };
  return [next, s.permitId ? [{ type: 'permit.revoke', permitId: s.permitId, code }] : NONE];
}

/** A durable intent, the request handed (or about to be handed) to the transport. */
function afterSend(s: CommandState, e: CommandEvent): [CommandState, CommandEffect[]] {
  const id = s.commandId ?? '';
  switch (e.type) {
    case 'reply.presend':
      return [
        { ...s, status: 'settled', outcome: { kind: 'not_sent', code: e.code } },
        [{ type: 'recordNotSent', commandId: id, code: e.code }],
      ];
    case 'reply.fault':
      return [
        { ...s, status: 'settled', outcome: { kind: 'fault', code: e.code } },
        [{ type: 'recordFault', commandId: id, code: e.code }],
      ];
    case 'reply.lost':
      return [{ ...s, status: 'unknown' }, [{ type: 'recordUnknown', commandId: id, reason: e.code }]];
    case 'reply.receipt':
      return onReceipt(s, e.status, e.operationId, false);
    case 'restore':
      return restored(s, e);
    default:
      return [s, NONE];
  }
}

/** A receipt of the call, or of a poll while running (`polled`: a non-final poll answer is not recorded again). */
function onReceipt(
  s: CommandState,
  status: CommandReceiptStatus,
  operationId: string | null | undefined,
  polled: boolean,
): [CommandState, CommandEffect[]] {
  const id = s.commandId ?? '';
  const base = { ...s, lastStatus: status, operationId: operationId ?? s.operationId };
  if (isFinalStatus(status))
    return [
      { ...base, status: 'settled', reconcileAt: null, outcome: { kind: 'receipt', status, via: 'call' } },
      [{ type: 'recordReceipt', commandId: id, status }],
    ];
  if (status === 'unknown') return [{ ...base, status: 'unknown' }, [{ type: 'recordReceipt', commandId: id, status }]];
  const poll: CommandEffect = { type: 'pollOperation', commandId: id, operationId: base.operationId };
  return [{ ...base, status: 'running' }, polled ? [poll] : [{ type: 'recordReceipt', commandId: id, status }, poll]];
}

function startReconcile(s: CommandState, at: number): [CommandState, CommandEffect[]] {
  const resumeTo = s.status === 'running' ? 'running' : 'unknown';
  // Send time unknown (recovered without it): measured from this first reconciliation, which is after any send.
  const settleAt = s.settleAt ?? at + s.deadlineMs + s.marginMs;
  return [
    { ...s, status: 'reconciling', resumeTo, settleAt, askedAt: at },
    [{ type: 'queryOperations', commandId: s.commandId ?? '' }],
  ];
}

function reconciling(s: CommandState, e: CommandEvent): [CommandState, CommandEffect[]] {
  const id = s.commandId ?? '';
  switch (e.type) {
    case 'reconcile.no_record': {
      // The answer holds as of the question: a slow reply must not carry an early "no record" past the deadline.
      const asked = Math.min(e.at, s.askedAt ?? e.at);
      const settleAt = s.settleAt ?? asked + s.deadlineMs + s.marginMs;
      if (asked >= settleAt)
        return [
          { ...s, status: 'settled', resumeTo: null, reconcileAt: null, outcome: { kind: 'not_executed' } },
          [
            { type: 'recordReconcile', commandId: id, outcome: 'not_executed' },
            { type: 'cancelReconcile', commandId: id },
          ],
        ];
      // Issue 16: the endpoint may still execute it until its deadline (plus the margin) has passed.
      return [
        { ...s, status: 'unknown', resumeTo: null, settleAt, reconcileAt: settleAt },
        [
          { type: 'recordReconcile', commandId: id, outcome: 'unknown', notBefore: settleAt },
          { type: 'scheduleReconcile', commandId: id, at: settleAt },
        ],
      ];
    }
    case 'reconcile.receipt': {
      const base = { ...s, resumeTo: null, lastStatus: e.status, operationId: e.operationId ?? s.operationId };
      if (isFinalStatus(e.status))
        return [
          {
            ...base,
            status: 'settled',
            reconcileAt: null,
            outcome: { kind: 'receipt', status: e.status, via: 'reconcile' },
          },
          [
            { type: 'recordReconcile', commandId: id, outcome: 'receipt' },
            { type: 'cancelReconcile', commandId: id },
          ],
        ];
      const status = e.status === 'unknown' ? 'unknown' : 'running';
      return [{ ...base, status }, [{ type: 'recordReconcile', commandId: id, outcome: status }]];
    }
    case 'reconcile.failed':
      return [{ ...s, status: s.resumeTo ?? 'unknown', resumeTo: null }, NONE];
    case 'restore':
      return restored(s, e);
    default:
      return [s, NONE];
  }
}

/**
 * After a restart: whatever was in flight may have executed, so the outcome is unknown (recorded), and a
 * re-armed reconciliation comes back from `reconcileAt` (XState-like timers do not survive a restore).
 */
function restored(s: CommandState, e: Extract<CommandEvent, { type: 'restore' }>): [CommandState, CommandEffect[]] {
  const id = s.commandId ?? '';
  const fx: CommandEffect[] = [{ type: 'recordUnknown', commandId: id, reason: e.reason ?? 'recovered_on_start' }];
  if (s.reconcileAt !== null) fx.push({ type: 'scheduleReconcile', commandId: id, at: Math.max(e.at, s.reconcileAt) });
  return [{ ...s, status: 'unknown', resumeTo: null, intentDurable: true }, fx];
}
