// Guarantees (issue 16 acceptance, HOST-070, 091): driven by arbitrary interleavings of replies (accepted,
// running, final), dropped and late messages, transport timeouts, host restarts (the state restored from its
// last durable copy, a deferred receipt possibly lost, every timer gone), reconciliations and time advancing,
// against a model of a conforming endpoint (a command id executes at most once, a same-id retry is answered
// `replayed`, execution may come late but never after the command's deadline, reads answer truthfully), the
// governed-command machine and a host that runs its effects and re-runs a step only after `not_executed`:
// - a step never executes twice;
// - no outcome is lost: an executed command ends recorded with its receipt, never `not_executed`;
// - the device gate (as projected from the gate effects, as the engine does) is shut whenever an outcome is in
//   flight or unknown, and a command counts as settled only on a durable (or committing) record of it;
// - `not_executed` is concluded only once the send time + deadline + transport margin has passed.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { commandGate, initialCommand, isUnsettled, transition } from '../../machines/governed-command.js';
import type {
  CommandEffect,
  CommandEvent,
  CommandReceiptStatus,
  CommandState,
} from '../../machines/governed-command.js';

const DEADLINE = 1_000;
const MARGIN = 200;
/** Queries of `mhs__operations` wait longer than a command's deadline (the engine's is 10 s). */
const QUERY_TIMEOUT = 2 * DEADLINE;
const POLL_MS = 100;
const DEVICE = 'dev';
const MAX_ATTEMPTS = 3;

type Action =
  | { kind: 'deliver'; pick: number; drop: boolean }
  | { kind: 'advance'; ms: number }
  | { kind: 'restart'; loseDeferred: boolean }
  | { kind: 'reconcile' }
  | { kind: 'rerun' }
  | { kind: 'ledgerFault' };

type ToEndpoint = { to: 'endpoint'; kind: 'send' | 'ops' | 'poll'; cmd: string; sentAt: number };
type ToHost = {
  to: 'host';
  kind: 'send' | 'ops' | 'poll';
  cmd: string;
  status: CommandReceiptStatus | null;
  fault?: true;
};
type Msg = (ToEndpoint | ToHost) & { call: number; epoch: number };

interface EndpointRecord {
  executeAt: number;
  executed: boolean;
  /** Answer the send only once executed (a synchronous endpoint); otherwise `accepted` at once. */
  replyWhenDone: { call: number; epoch: number } | null;
}

/** A tiny seeded PRNG (mulberry32) for the endpoint's choices. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The world: one step of a task on one device, the host driving it through the machine, the endpoint, the wire. */
class World {
  now = 0;
  epoch = 0;
  private nextCall = 1;
  private nextId = 1;
  readonly rand: () => number;
  /** Host, live: each command's machine state. */
  cmds = new Map<string, CommandState>();
  /** Host, durable: the last state each command's ledger entries stand for, and a receipt not yet committed. */
  durable = new Map<string, CommandState>();
  deferred = new Map<string, CommandState>();
  /** Host, volatile: the gate as projected from effects, calls awaiting an answer, timers. */
  gate: { commandId: string; reason: string } | null = null;
  calls = new Map<string, { call: number; kind: 'send' | 'ops' | 'poll' }>();
  timers: Array<{ at: number; kind: 'reconcile' | 'timeout' | 'poll'; cmd: string; call?: number }> = [];
  usedPermits = new Set<string>();
  /** Observed truth. */
  sentAt = new Map<string, number>();
  endpoint = new Map<string, EndpointRecord>();
  executions = 0;
  net: Msg[] = [];
  attempts = 0;

  constructor(seed: number) {
    this.rand = prng(seed);
    this.startCommand();
  }

  /** The step (re-)run under a new command id, only with the device gate open. */
  startCommand(): void {
    expect(this.gate).toBeNull();
    this.attempts++;
    const id = `cmd_${this.nextId++}`;
    const permit = `permit_${id}`;
    this.cmds.set(id, initialCommand({ deviceId: DEVICE, effectful: true, deadlineMs: DEADLINE, marginMs: MARGIN }));
    this.apply(id, { type: 'authorise', permitId: permit });
    this.apply(id, { type: 'journal', commandId: id, at: this.now });
    this.apply(id, { type: 'journal.done' });
  }

  apply(id: string, e: CommandEvent): void {
    const prev = this.cmds.get(id)!;
    const [next, fx] = transition(prev, e);
    this.cmds.set(id, next);
    if (next.outcome?.kind === 'not_executed' && prev.outcome?.kind !== 'not_executed') {
      const sent = this.sentAt.get(id);
      if (sent !== undefined) expect(this.now).toBeGreaterThanOrEqual(sent + DEADLINE + MARGIN);
    }
    let durable = false;
    for (const f of fx) durable = this.run(id, f) || durable;
    if (!durable) return;
    const snap = JSON.parse(JSON.stringify(this.cmds.get(id))) as CommandState;
    if (fx.some((f) => f.type === 'recordReceipt')) this.deferred.set(id, snap);
    else {
      this.deferred.delete(id);
      this.durable.set(id, snap);
    }
  }

  /** Runs one effect; true when it writes the ledger. */
  private run(id: string, f: CommandEffect): boolean {
    switch (f.type) {
      case 'gate.shut':
        if (this.gate) expect(this.gate.commandId).toBe(id); // one command holds a device gate
        this.gate = { commandId: id, reason: f.reason };
        return false;
      case 'gate.open':
        if (this.gate?.commandId === id) this.gate = null;
        return false;
      case 'permit.used':
        expect(this.usedPermits.has(f.permitId)).toBe(false);
        this.usedPermits.add(f.permitId);
        return true;
      case 'send': {
        this.sentAt.set(id, this.now);
        this.apply(id, { type: 'sent', at: this.now });
        const call = this.request(id, 'send');
        this.timers.push({ at: this.now + f.timeoutMs, kind: 'timeout', cmd: id, call });
        return true;
      }
      case 'pollOperation':
        // Polls are paced on the clock, as the engine's follow loop is.
        this.timers.push({ at: this.now + POLL_MS, kind: 'poll', cmd: id });
        return false;
      case 'queryOperations': {
        const call = this.request(id, 'ops');
        this.timers.push({ at: this.now + QUERY_TIMEOUT, kind: 'timeout', cmd: id, call });
        return false;
      }
      case 'scheduleReconcile':
        this.timers = this.timers.filter((t) => !(t.kind === 'reconcile' && t.cmd === id));
        this.timers.push({ at: f.at, kind: 'reconcile', cmd: id });
        return false;
      case 'cancelReconcile':
        this.timers = this.timers.filter((t) => !(t.kind === 'reconcile' && t.cmd === id));
        return false;
      case 'journalIntent':
      case 'permit.revoke':
        return false;
      default:
        return true; // recordReceipt, recordNotSent, recordFault, recordUnknown, recordReconcile
    }
  }

  private request(id: string, kind: 'send' | 'ops' | 'poll'): number {
    const call = this.nextCall++;
    this.calls.set(id, { call, kind });
    this.net.push({ to: 'endpoint', kind, cmd: id, sentAt: this.now, call, epoch: this.epoch });
    return call;
  }

  /** The conforming endpoint. */
  private atEndpoint(m: ToEndpoint & { call: number; epoch: number }): void {
    const reply = (status: CommandReceiptStatus | null, fault?: true): void => {
      this.net.push({
        to: 'host',
        kind: m.kind,
        cmd: m.cmd,
        status,
        call: m.call,
        epoch: m.epoch,
        ...(fault ? { fault } : {}),
      });
    };
    const rec = this.endpoint.get(m.cmd);
    const current = rec ? (rec.executed ? 'completed' : 'running') : null;
    if (m.kind !== 'send') return reply(current);
    if (rec) return reply(current); // a same-id retry: replayed, never executed again
    const lastStart = m.sentAt + DEADLINE;
    if (this.now > lastStart) return reply(null, true); // past its deadline: refused, nothing executed
    const executeAt = this.now + Math.floor(this.rand() * (lastStart - this.now + 1));
    const sync = this.rand() < 0.5;
    this.endpoint.set(m.cmd, {
      executeAt,
      executed: false,
      replyWhenDone: sync ? { call: m.call, epoch: m.epoch } : null,
    });
    if (!sync) reply(this.rand() < 0.5 ? 'accepted' : 'running');
    this.execute();
  }

  private execute(): void {
    for (const [cmd, r] of this.endpoint) {
      if (r.executed || r.executeAt > this.now) continue;
      r.executed = true;
      this.executions++;
      if (r.replyWhenDone) this.net.push({ to: 'host', kind: 'send', cmd, status: 'completed', ...r.replyWhenDone });
    }
  }

  private atHost(m: ToHost & { call: number; epoch: number }): void {
    const pending = this.calls.get(m.cmd);
    // The connection of another host process, or an answer after its call timed out: nobody is listening.
    if (m.epoch !== this.epoch || pending?.call !== m.call) return;
    this.calls.delete(m.cmd);
    if (m.kind === 'send') {
      if (m.fault) this.apply(m.cmd, { type: 'reply.fault', code: 'MHS.TIMEOUT.DEADLINE' });
      else this.apply(m.cmd, { type: 'reply.receipt', status: m.status ?? 'unknown' });
    } else if (m.kind === 'ops') {
      if (m.status === null) this.apply(m.cmd, { type: 'reconcile.no_record', at: this.now });
      else this.apply(m.cmd, { type: 'reconcile.receipt', status: m.status, at: this.now });
    } else if (m.status === null) this.apply(m.cmd, { type: 'follow.ended' });
    else this.apply(m.cmd, { type: 'reply.receipt', status: m.status });
  }

  deliver(pick: number, drop: boolean): void {
    if (!this.net.length) return;
    const [m] = this.net.splice(pick % this.net.length, 1);
    if (drop || !m) return;
    if (m.to === 'endpoint') this.atEndpoint(m);
    else this.atHost(m);
  }

  advance(ms: number): void {
    const until = this.now + ms;
    for (const [id, snap] of this.deferred) this.durable.set(id, snap); // the group commit
    this.deferred.clear();
    for (;;) {
      const due = [
        ...this.timers.map((t) => t.at),
        ...[...this.endpoint.values()].filter((r) => !r.executed).map((r) => r.executeAt),
      ].filter((t) => t <= until);
      if (!due.length) break;
      this.now = Math.max(this.now, Math.min(...due));
      this.execute();
      const fire = this.timers.filter((t) => t.at <= this.now);
      this.timers = this.timers.filter((t) => t.at > this.now);
      for (const t of fire) this.fire(t);
    }
    this.now = until;
  }

  private fire(t: World['timers'][number]): void {
    const s = this.cmds.get(t.cmd);
    if (!s) return;
    if (t.kind === 'reconcile') {
      if (!this.calls.has(t.cmd)) this.apply(t.cmd, { type: 'reconcile', at: this.now });
      return;
    }
    if (t.kind === 'poll') {
      if (s.status === 'running' && !this.calls.has(t.cmd)) {
        const call = this.request(t.cmd, 'poll');
        this.timers.push({ at: this.now + QUERY_TIMEOUT, kind: 'timeout', cmd: t.cmd, call });
      }
      return;
    }
    const pending = this.calls.get(t.cmd);
    if (!pending || pending.call !== t.call) return;
    this.calls.delete(t.cmd);
    if (pending.kind === 'send') this.apply(t.cmd, { type: 'reply.lost', code: 'MHS.TRANSPORT.TIMEOUT' });
    else if (pending.kind === 'ops') this.apply(t.cmd, { type: 'reconcile.failed', code: 'MHS.TRANSPORT.TIMEOUT' });
    else this.apply(t.cmd, { type: 'follow.ended' });
  }

  /** The host process dies and starts again: only durable state survives; the endpoint carries on. */
  restart(loseDeferred: boolean): void {
    this.epoch++;
    if (!loseDeferred) for (const [id, snap] of this.deferred) this.durable.set(id, snap);
    this.deferred.clear();
    this.calls.clear();
    this.timers = [];
    this.cmds = new Map([...this.durable].map(([id, s]) => [id, JSON.parse(JSON.stringify(s)) as CommandState]));
    this.gate = null;
    for (const [id, s] of this.cmds) {
      const g = commandGate(s);
      if (g.status === 'shut') this.gate = { commandId: id, reason: g.reason };
    }
    for (const [id, s] of this.cmds) if (isUnsettled(s)) this.apply(id, { type: 'restore', at: this.now });
  }

  /** The ledger refuses a deferred receipt (a store fault): the host no longer knows it durably. */
  ledgerFault(): void {
    for (const id of [...this.deferred.keys()]) {
      this.deferred.delete(id);
      this.apply(id, { type: 'record.failed' });
    }
  }

  /** An operator's (or the attach's) reconciliation of every open command. */
  reconcileAll(): void {
    for (const [id, s] of this.cmds)
      if ((s.status === 'unknown' || s.status === 'running') && !this.calls.has(id))
        this.apply(id, { type: 'reconcile', at: this.now });
  }

  /** A resume re-runs the step when, and only when, its last command was concluded not executed. */
  rerun(): void {
    const last = [...this.cmds.values()].at(-1);
    if (last?.outcome?.kind === 'not_executed' && this.attempts < MAX_ATTEMPTS) this.startCommand();
  }

  check(): void {
    const open = [...this.cmds].filter(([, s]) => isUnsettled(s));
    expect(open.length).toBeLessThanOrEqual(1);
    for (const [id, s] of open) {
      const g = commandGate(s);
      expect(g.status).toBe('shut');
      expect(this.gate).toEqual({ commandId: id, reason: g.status === 'shut' ? g.reason : '' });
    }
    if (!open.length) expect(this.gate).toBeNull();
    // Settled only on a durable record (or one in the group commit under way): a failed append reopens the command.
    for (const [id, s] of this.cmds) {
      if (isUnsettled(s)) continue;
      const stored = this.deferred.get(id) ?? this.durable.get(id);
      expect(stored !== undefined && !isUnsettled(stored)).toBe(true);
    }
    for (const [id, s] of this.cmds) if (s.outcome?.kind === 'not_executed') expect(this.endpoint.has(id)).toBe(false);
    expect(this.executions).toBeLessThanOrEqual(1);
  }

  /** Afterwards: no drops, time passes, reconciliations run until every command is settled. */
  drain(): void {
    const settled = () => [...this.cmds.values()].every((s) => !isUnsettled(s));
    for (let i = 0; i < 200; i++) {
      while (this.net.length) {
        this.deliver(0, false);
        this.check();
      }
      if (settled()) return;
      this.reconcileAll();
      while (this.net.length) {
        this.deliver(0, false);
        this.check();
      }
      this.advance(DEADLINE / 2);
      this.check();
    }
    throw new Error('did not settle');
  }
}

const action: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('deliver' as const),
      pick: fc.nat(8),
      drop: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 1_500 })),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('restart' as const), loseDeferred: fc.boolean() }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'reconcile' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'rerun' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'ledgerFault' as const }) },
);

describe('governed command against a conforming endpoint (property)', () => {
  it('never executes a step twice, never loses an outcome, keeps the gate shut while unknown', () => {
    fc.assert(
      fc.property(fc.integer(), fc.array(action, { maxLength: 60 }), (seed, actions) => {
        const w = new World(seed);
        for (const a of actions) {
          if (a.kind === 'deliver') w.deliver(a.pick, a.drop);
          else if (a.kind === 'advance') w.advance(a.ms);
          else if (a.kind === 'restart') w.restart(a.loseDeferred);
          else if (a.kind === 'reconcile') w.reconcileAll();
          else if (a.kind === 'ledgerFault') w.ledgerFault();
          else w.rerun();
          w.check();
        }
        w.drain();
        for (const [id, s] of w.cmds) {
          const executed = w.endpoint.get(id)?.executed === true;
          // Executed ⇔ recorded with its receipt; never executed ⇒ never a receipt.
          expect(s.outcome?.kind === 'receipt' && s.outcome.status === 'completed').toBe(executed);
        }
        // A command the endpoint executed is known to the host: its intent was durable before the send.
        for (const id of w.endpoint.keys()) expect(w.cmds.has(id)).toBe(true);
        expect(w.executions).toBeLessThanOrEqual(1);
      }),
      {
        numRuns: 600,
        examples: [
          // A final receipt whose append fails: the command is unknown again, its gate shut, until reconciled.
          [
            833940819,
            [
              { kind: 'deliver', pick: 0, drop: false },
              { kind: 'advance', ms: 109 },
              { kind: 'deliver', pick: 0, drop: false },
              { kind: 'ledgerFault' },
            ],
          ],
          // A "no record" answered before a late request arrived, delivered after the deadline had passed.
          [
            1,
            [
              { kind: 'advance', ms: 900 },
              { kind: 'restart', loseDeferred: false },
              { kind: 'reconcile' },
              { kind: 'deliver', pick: 1, drop: false },
              { kind: 'deliver', pick: 0, drop: false },
              { kind: 'advance', ms: 400 },
              { kind: 'deliver', pick: 0, drop: false },
            ],
          ],
        ],
      },
    );
  });
});
