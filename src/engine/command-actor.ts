import { commandGate, isUnsettled, journalledCommand, transition } from '../../machines/governed-command.js';
import type { CommandEffect, CommandEvent, CommandState } from '../../machines/governed-command.js';
import type { CallEnv, PendingCommand } from './call-types.js';
import type { GateReason, GateState } from './device-gate.js';

/** Where a command projects its derived device gate: its endpoint actor, by message (never its gate table). */
export interface GateTarget {
  gateOf(deviceId: string): GateState;
  acquireGate(deviceId: string, commandId: string, now: number): void;
  markGate(deviceId: string, commandId: string, reason: GateReason): void;
  releaseGate(deviceId: string, commandId: string): void;
}

/**
 * The one owner of a governed command's state (issue 16 item 1): it feeds each observed result to the pure
 * machine (`machines/governed-command.ts`) and runs the effects that touch only the host's own state: the device
 * gate and the pending map are projections of the machine state, the permit is marked used, a reconciliation is
 * re-armed or cancelled. The effects that are I/O (journal, send, poll, the ledger's outcome entries) are returned
 * to the caller (the governed call, reconcile), which runs them and feeds their result back as the next event.
 */
export class CommandActor {
  private s: CommandState;
  private gates: GateTarget | null;

  constructor(
    private readonly env: CallEnv,
    readonly p: PendingCommand,
    state: CommandState,
    gates: GateTarget | null,
  ) {
    this.s = state;
    this.gates = gates;
    this.sync();
  }

  /** The machine state (plain data). */
  get state(): CommandState {
    return this.s;
  }

  /** Decides `e` and runs the host-local effects; returns every effect (the caller runs the I/O ones). */
  send(e: CommandEvent): CommandEffect[] {
    const [next, fx] = transition(this.s, e);
    this.s = next;
    try {
      for (const f of fx) this.run(f);
    } finally {
      this.sync();
    }
    return fx;
  }

  /** Projects the derived gate onto `gates` (an endpoint actor attached again after a restart or reconnect). */
  bind(gates: GateTarget): void {
    this.gates = gates;
    const g = commandGate(this.s);
    if (g.status === 'shut') gates.markGate(this.p.deviceId, this.p.commandId, g.reason);
  }

  private run(f: CommandEffect): void {
    const gates = this.gates;
    switch (f.type) {
      case 'gate.shut':
        if (!gates) return;
        if (f.reason === 'in_flight' && gates.gateOf(f.deviceId).status === 'open')
          gates.acquireGate(f.deviceId, f.commandId, this.env.clock.now());
        else gates.markGate(f.deviceId, f.commandId, f.reason); // held by another command: left to it
        return;
      case 'gate.open':
        gates?.releaseGate(f.deviceId, f.commandId);
        return;
      case 'permit.used':
        this.env.usedPermits.add(f.permitId);
        return;
      case 'scheduleReconcile':
        this.env.scheduleReconcile?.(this.p, f.at);
        return;
      case 'cancelReconcile':
        this.env.cancelReconcile?.(f.commandId);
        return;
      default:
        return; // I/O: the caller's
    }
  }

  /** The pending map and the command's record follow the machine state (never set anywhere else). */
  private sync(): void {
    const s = this.s;
    const p = this.p;
    if (s.sentAt !== null) p.sentBy = s.sentAt;
    p.operationId = s.operationId;
    p.reason =
      s.status === 'running' || (s.status === 'reconciling' && s.resumeTo === 'running')
        ? 'running'
        : s.status === 'journalled' || s.status === 'sent'
          ? 'in_flight'
          : 'unknown';
    if (isUnsettled(s)) {
      this.env.pending.set(p.commandId, p);
      this.env.commands.set(p.commandId, this);
    } else {
      this.env.pending.delete(p.commandId);
      this.env.commands.delete(p.commandId);
    }
  }
}

/**
 * The machine state of a command journalled by an earlier process (or found unsettled in the store). Its send time
 * is bounded from above by now (issue 16): its process is gone (start-up recovery, an orphaned gate), so any send
 * happened before this takeover; the intent's time would be a lower bound and could conclude `not_executed` early.
 */
function recoveredState(env: CallEnv, p: PendingCommand): CommandState {
  const s = journalledCommand(
    {
      deviceId: p.deviceId,
      effectful: p.effectful,
      deadlineMs: p.deadlineMs,
      marginMs: env.transportMarginMs,
      commandId: p.commandId,
      sentAt: p.sentBy ?? env.clock.now(),
    },
    { operationId: p.operationId, reconcileAt: p.reconcileAt ?? null },
  );
  // A recorded wait holds too: whichever bound is later.
  if (p.reconcileAt !== undefined && (s.settleAt === null || s.settleAt < p.reconcileAt)) s.settleAt = p.reconcileAt;
  return s;
}

/** The actor of an unsettled command: the live one, or one restored (unknown) from its journalled record. */
export function commandOf(env: CallEnv, p: PendingCommand, gates: GateTarget | null = null): CommandActor {
  const live = env.commands.get(p.commandId);
  if (live) return live;
  const [unknown] = transition(recoveredState(env, p), { type: 'restore', at: env.clock.now() });
  return new CommandActor(env, p, unknown, gates);
}

/**
 * Restores a command this process takes over (start-up recovery, an orphaned gate): it becomes unknown with its
 * gate shut, and its re-armed reconciliation comes back from data. Returns the actor and the effects for the
 * caller to run (the `command.unknown` entry).
 */
export function restoreCommand(
  env: CallEnv,
  p: PendingCommand,
  gates: GateTarget,
  reason: 'recovered_on_start' | 'owner_gone',
): { actor: CommandActor; effects: CommandEffect[] } {
  const actor = env.commands.get(p.commandId) ?? new CommandActor(env, p, recoveredState(env, p), gates);
  actor.bind(gates);
  const effects = actor.send({ type: 'restore', at: env.clock.now(), reason });
  return { actor, effects };
}
