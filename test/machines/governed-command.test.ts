// Guarantees (issue 16 item 1, HOST-070, 091): the governed-command reducer decides and executes nothing. The
// device gate is shut from the intent until the outcome is known and is derived from the state (its changes come
// out as effects); the permit is used once the intent is durable and revoked when the command is refused or its
// intent fails; "no record" at reconciliation concludes not_executed only once send + deadline + margin has
// passed, and before that keeps the command unknown with a re-armed reconciliation whose due time is data that a
// restored state (round-tripped through JSON) re-arms.
import { describe, expect, it } from 'vitest';
import {
  commandGate,
  commandPermit,
  initialCommand,
  journalledCommand,
  transition,
  transitionAll,
} from '../../machines/governed-command.js';
import type { CommandEffect, CommandEvent, CommandState } from '../../machines/governed-command.js';
import { gateEffect } from '../../src/ledger/gate-projection.js';

const DEADLINE = 1_000;
const MARGIN = 200;
const fresh = (effectful = true): CommandState =>
  initialCommand({ deviceId: 'd1', effectful, deadlineMs: DEADLINE, marginMs: MARGIN });
const types = (fx: CommandEffect[]) => fx.map((f) => f.type);

/** Up to `sent` at time 100 with permit `p1`. */
function sent(): CommandState {
  return transitionAll(fresh(), [
    { type: 'authorise', permitId: 'p1' },
    { type: 'journal', commandId: 'cmd_1', at: 90 },
    { type: 'journal.done' },
    { type: 'sent', at: 100 },
  ])[0];
}

describe('governed command: the call path', () => {
  it('journals, shuts the gate, uses the permit, sends with the deadline under the transport timeout', () => {
    const [a] = transition(fresh(), { type: 'authorise', permitId: 'p1' });
    expect(a.status).toBe('authorised');
    expect(commandPermit(a)).toEqual({ status: 'issued', permitId: 'p1' });
    expect(commandGate(a).status).toBe('open');
    const [j, fx1] = transition(a, { type: 'journal', commandId: 'cmd_1', at: 90 });
    expect(j.status).toBe('journalled');
    expect(fx1).toEqual([
      { type: 'gate.shut', deviceId: 'd1', commandId: 'cmd_1', reason: 'in_flight' },
      { type: 'journalIntent', commandId: 'cmd_1' },
    ]);
    const [d, fx2] = transition(j, { type: 'journal.done' });
    expect(fx2).toEqual([
      { type: 'permit.used', permitId: 'p1' },
      { type: 'send', commandId: 'cmd_1', deadlineMs: DEADLINE, timeoutMs: DEADLINE + MARGIN },
    ]);
    expect(commandPermit(d).status).toBe('used');
    const [s] = transition(d, { type: 'sent', at: 100 });
    expect(s.settleAt).toBe(100 + DEADLINE + MARGIN);
    expect(commandGate(s)).toEqual({ status: 'shut', reason: 'in_flight' });
  });

  it('a refused call revokes its permit; an intent that failed revokes it and reopens the gate', () => {
    const [a] = transition(fresh(), { type: 'authorise', permitId: 'p1' });
    const [r, fx] = transition(a, { type: 'refuse', code: 'MHS.HOST.DEVICE_GATE_CLOSED' });
    expect(r.outcome).toEqual({ kind: 'refused', code: 'MHS.HOST.DEVICE_GATE_CLOSED' });
    expect(fx).toEqual([{ type: 'permit.revoke', permitId: 'p1', code: 'MHS.HOST.DEVICE_GATE_CLOSED' }]);
    expect(commandPermit(r).status).toBe('revoked');
    const [f, fx2] = transitionAll(a, [
      { type: 'journal', commandId: 'cmd_1', at: 1 },
      { type: 'journal.failed', code: 'MHS.HOST.LEDGER_UNAVAILABLE' },
    ]);
    expect(f.outcome?.kind).toBe('not_sent');
    expect(types(fx2)).toEqual(['gate.shut', 'journalIntent', 'gate.open', 'permit.revoke']);
  });

  it('final, running and unknown receipts; a fault and a pre-send failure executed nothing', () => {
    const [fin, fx] = transition(sent(), { type: 'reply.receipt', status: 'completed' });
    expect(fin.outcome).toEqual({ kind: 'receipt', status: 'completed', via: 'call' });
    expect(types(fx)).toEqual(['gate.open', 'recordReceipt']);
    const [run, fx2] = transition(sent(), { type: 'reply.receipt', status: 'accepted', operationId: 'op_1' });
    expect(commandGate(run)).toEqual({ status: 'shut', reason: 'running' });
    expect(fx2.at(-1)).toEqual({ type: 'pollOperation', commandId: 'cmd_1', operationId: 'op_1' });
    // A poll that is still running records nothing new; the final one settles.
    expect(transition(run, { type: 'reply.receipt', status: 'running' })[1].map((f) => f.type)).toEqual([
      'pollOperation',
    ]);
    expect(transition(run, { type: 'reply.receipt', status: 'failed' })[0].status).toBe('settled');
    const [unk] = transition(sent(), { type: 'reply.receipt', status: 'unknown' });
    expect(commandGate(unk)).toEqual({ status: 'shut', reason: 'unknown' });
    expect(transition(sent(), { type: 'reply.fault', code: 'MHS.SESSION.EXPIRED' })[1].map((f) => f.type)).toEqual([
      'gate.open',
      'recordFault',
    ]);
    expect(transition(sent(), { type: 'reply.presend', code: 'MHS.LIMIT.RATE' })[0].outcome?.kind).toBe('not_sent');
  });

  it('a lost reply is unknown with the gate shut; a receipt that could not be recorded shuts it again', () => {
    const [u, fx] = transition(sent(), { type: 'reply.lost', code: 'MHS.TRANSPORT.TIMEOUT' });
    expect(u.status).toBe('unknown');
    expect(fx).toEqual([
      { type: 'gate.shut', deviceId: 'd1', commandId: 'cmd_1', reason: 'unknown' },
      { type: 'recordUnknown', commandId: 'cmd_1', reason: 'MHS.TRANSPORT.TIMEOUT' },
    ]);
    const [fin] = transition(sent(), { type: 'reply.receipt', status: 'completed' });
    const [again] = transition(fin, { type: 'record.failed' });
    expect(commandGate(again)).toEqual({ status: 'shut', reason: 'unknown' });
  });

  it('a read takes no gate', () => {
    const [s] = transitionAll(fresh(false), [
      { type: 'authorise', permitId: null },
      { type: 'journal', commandId: 'cmd_r', at: 0 },
      { type: 'journal.done' },
      { type: 'reply.lost', code: 'MHS.TRANSPORT.TIMEOUT' },
    ]);
    expect(s.status).toBe('unknown');
    expect(commandGate(s).status).toBe('open');
  });

  it('events that do not apply change nothing', () => {
    const s = sent();
    const ignored: CommandEvent[] = [
      { type: 'authorise', permitId: 'x' },
      { type: 'journal.done' },
      { type: 'reconcile.no_record', at: 1e9 },
    ];
    for (const e of ignored) expect(transition(s, e)).toEqual([s, []]);
  });
});

describe('governed command: reconciliation and the deadline rule (issue 16)', () => {
  const unknownAt100 = () => transition(sent(), { type: 'reply.lost', code: 'MHS.TRANSPORT.TIMEOUT' })[0];
  const settleAt = 100 + DEADLINE + MARGIN;

  it('no record before send + deadline + margin stays unknown and re-arms the reconciliation at that time', () => {
    const [r, fx] = transitionAll(unknownAt100(), [
      { type: 'reconcile', at: 500 },
      { type: 'reconcile.no_record', at: settleAt - 1 },
    ]);
    expect(r.status).toBe('unknown');
    expect(commandGate(r).status).toBe('shut');
    expect(r.reconcileAt).toBe(settleAt);
    expect(fx).toContainEqual({ type: 'recordReconcile', commandId: 'cmd_1', outcome: 'unknown', notBefore: settleAt });
    expect(fx).toContainEqual({ type: 'scheduleReconcile', commandId: 'cmd_1', at: settleAt });
  });

  it('no record once it has passed concludes not_executed and reopens the gate', () => {
    const [r, fx] = transitionAll(unknownAt100(), [
      { type: 'reconcile', at: settleAt },
      { type: 'reconcile.no_record', at: settleAt },
    ]);
    expect(r.outcome).toEqual({ kind: 'not_executed' });
    expect(types(fx)).toEqual(['queryOperations', 'gate.open', 'recordReconcile', 'cancelReconcile']);
  });

  it('a retained receipt settles it; a running one keeps the gate shut; a failed query changes nothing', () => {
    const [a] = transitionAll(unknownAt100(), [
      { type: 'reconcile', at: 300 },
      { type: 'reconcile.receipt', status: 'completed', at: 300 },
    ]);
    expect(a.outcome).toEqual({ kind: 'receipt', status: 'completed', via: 'reconcile' });
    const [b] = transitionAll(unknownAt100(), [
      { type: 'reconcile', at: 300 },
      { type: 'reconcile.receipt', status: 'running', at: 300 },
    ]);
    expect(commandGate(b)).toEqual({ status: 'shut', reason: 'running' });
    const [c] = transitionAll(unknownAt100(), [
      { type: 'reconcile', at: 300 },
      { type: 'reconcile.failed', code: 'MHS.TRANSPORT.DISCONNECTED' },
    ]);
    expect(c.status).toBe('unknown');
  });

  it('without a known send time the deadline runs from the first reconciliation', () => {
    const s = journalledCommand({
      deviceId: 'd1',
      effectful: true,
      deadlineMs: DEADLINE,
      marginMs: MARGIN,
      commandId: 'c',
    });
    const [r] = transitionAll(s, [
      { type: 'restore', at: 5_000 },
      { type: 'reconcile', at: 5_000 },
      { type: 'reconcile.no_record', at: 5_000 + DEADLINE },
    ]);
    expect(r.status).toBe('unknown');
    expect(r.reconcileAt).toBe(5_000 + DEADLINE + MARGIN);
  });

  it('a restored snapshot (through JSON) records unknown and re-arms the reconciliation from its data', () => {
    const [waiting] = transitionAll(unknownAt100(), [
      { type: 'reconcile', at: 500 },
      { type: 'reconcile.no_record', at: 500 },
    ]);
    const restored = JSON.parse(JSON.stringify(waiting)) as CommandState;
    const [r, fx] = transition(restored, { type: 'restore', at: 700 });
    expect(commandGate(r)).toEqual({ status: 'shut', reason: 'unknown' });
    expect(fx).toEqual([
      { type: 'recordUnknown', commandId: 'cmd_1', reason: 'recovered_on_start' },
      { type: 'scheduleReconcile', commandId: 'cmd_1', at: settleAt },
    ]);
    // An in-flight command restored after a crash may have executed: unknown, never resent.
    const [fromSent, fx2] = transition(JSON.parse(JSON.stringify(sent())) as CommandState, {
      type: 'restore',
      at: 150,
      reason: 'owner_gone',
    });
    expect(fromSent.status).toBe('unknown');
    expect(fx2).toEqual([
      { type: 'gate.shut', deviceId: 'd1', commandId: 'cmd_1', reason: 'unknown' },
      { type: 'recordUnknown', commandId: 'cmd_1', reason: 'owner_gone' },
    ]);
  });
});

describe('governed command: the same gate rule as the ledger projection (gateEffect)', () => {
  /** Each ledger entry of a command's life and the machine event it stands for, from the state before it. */
  const intent = { kind: 'command.intent', command_id: 'cmd_1', endpoint_id: 'ep', device_id: 'd1', effect: 'act' };
  const journalled = transitionAll(fresh(), [{ type: 'authorise', permitId: null }])[0];
  const unknownNow = transition(sent(), { type: 'reply.lost', code: 'MHS.TRANSPORT.TIMEOUT' })[0];
  const reconcilingNow = transition(unknownNow, { type: 'reconcile', at: 5_000 })[0];
  const cases: Array<[string, CommandState, CommandEvent, Record<string, unknown>]> = [
    ['intent', journalled, { type: 'journal', commandId: 'cmd_1', at: 0 }, intent],
    [
      'final receipt',
      sent(),
      { type: 'reply.receipt', status: 'completed' },
      { kind: 'receipt', receipt: { status: 'completed' } },
    ],
    [
      'running receipt',
      sent(),
      { type: 'reply.receipt', status: 'running' },
      { kind: 'receipt', receipt: { status: 'running' } },
    ],
    [
      'unknown receipt',
      sent(),
      { type: 'reply.receipt', status: 'unknown' },
      { kind: 'receipt', receipt: { status: 'unknown' } },
    ],
    ['not sent', sent(), { type: 'reply.presend', code: 'MHS.LIMIT.RATE' }, { kind: 'command.not_sent' }],
    ['fault', sent(), { type: 'reply.fault', code: 'MHS.SESSION.EXPIRED' }, { kind: 'error', phase: 'endpoint_fault' }],
    ['unknown', sent(), { type: 'reply.lost', code: 'MHS.TRANSPORT.TIMEOUT' }, { kind: 'command.unknown' }],
    [
      'not executed',
      reconcilingNow,
      { type: 'reconcile.no_record', at: 5_000 },
      { kind: 'reconcile', outcome: 'not_executed' },
    ],
    [
      'waiting',
      transition(unknownNow, { type: 'reconcile', at: 200 })[0],
      { type: 'reconcile.no_record', at: 200 },
      { kind: 'reconcile', outcome: 'unknown' },
    ],
    [
      'reconciled',
      reconcilingNow,
      { type: 'reconcile.receipt', status: 'failed', at: 5_000 },
      { kind: 'reconcile', outcome: 'receipt' },
    ],
  ];
  it.each(cases)('%s', (_name, from, event, entry) => {
    const effect = gateEffect({ command_id: 'cmd_1', ...entry } as never);
    const [next] = transition(from, event);
    const gate = commandGate(next);
    if (effect?.op === 'settle') expect(gate.status).toBe('open');
    else {
      expect(gate.status).toBe('shut');
      if (effect?.op === 'mark' && gate.status === 'shut') expect(gate.reason).toBe(effect.reason);
    }
  });
});
