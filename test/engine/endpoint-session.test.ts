// Guarantees: the session machine heartbeats before expires_at, expires and reopens on demand, and a snapshot
// persisted to JSON and restored re-arms its heartbeat and expiry deadlines (HOST-034, HOST-036). A session held by
// an in-flight call is never idle; released, it closes at its idle deadline, also after a restore (issue 16).
import { describe, expect, test } from 'vitest';
import { createActor, fromPromise, initialTransition, transition, waitFor } from 'xstate';
import { HostError, ErrorCode, SimulatedClock } from '../../src/core/index.js';
import {
  endpointSessionMachine,
  heartbeatDue,
  sessionDelays,
  startSessionActor,
  xstateClock,
} from '../../machines/endpoint-session.js';
import type { SessionGrant, SessionInput } from '../../machines/endpoint-session.js';

const INPUT: SessionInput = { endpointId: 'mhs://e', deviceId: 'd1', capabilities: ['cap.a.v1'], ttlMs: 10_000 };
const flush = () => new Promise((r) => setImmediate(r));

function scripted(clock: SimulatedClock, opts: { heartbeatFails?: ErrorCode; heartbeatHangs?: boolean } = {}) {
  const calls = { open: 0, heartbeat: 0, close: 0, recorded: [] as string[] };
  const grant = (n: number): SessionGrant => ({
    sessionId: `ses_${n}`,
    expiresAt: clock.now() + 10_000,
    heartbeatIntervalMs: 3_000,
    now: clock.now(),
  });
  const logic = endpointSessionMachine.provide({
    actors: {
      openSession: fromPromise(async () => grant(++calls.open)),
      heartbeat: fromPromise(async ({ input }) => {
        calls.heartbeat++;
        if (opts.heartbeatHangs) return new Promise<SessionGrant>(() => undefined);
        if (opts.heartbeatFails) throw new HostError(opts.heartbeatFails, 'gone');
        return { ...grant(0), sessionId: input.sessionId };
      }),
      closeSession: fromPromise(async () => {
        calls.close++;
      }),
    },
    actions: {
      recordOpened: () => void calls.recorded.push('open'),
      recordHeartbeat: () => void calls.recorded.push('heartbeat'),
      recordExpired: () => void calls.recorded.push('expired'),
      recordClosed: () => void calls.recorded.push('closed'),
    },
  });
  return { logic, calls };
}

describe('endpoint session machine', () => {
  test('HOST-036: heartbeat is due before expires_at', () => {
    expect(heartbeatDue({ sessionId: 's', now: 0, expiresAt: 10_000, heartbeatIntervalMs: 3_000 })).toBe(3_000);
    expect(heartbeatDue({ sessionId: 's', now: 0, expiresAt: 10_000, heartbeatIntervalMs: 60_000 })).toBe(8_000);
    expect(heartbeatDue({ sessionId: 's', now: 0, expiresAt: 10_000, heartbeatIntervalMs: 0 })).toBeLessThan(10_000);
  });

  test('decisions without execution: transition() to expired emits recordExpired only', () => {
    const [s0] = initialTransition(endpointSessionMachine, INPUT);
    expect(s0.value).toBe('opening');
    const [closed, actions] = transition(endpointSessionMachine, s0, { type: 'session.close' });
    expect(closed.value).toBe('closed');
    expect(actions.map((a) => a.type)).toContain('recordClosed');
    const openSnap = endpointSessionMachine.resolveState({
      value: { open: 'idle' },
      context: { ...s0.context, sessionId: 'ses_1', expiresAt: 10, heartbeatDueAt: 5, grantedAt: 0 },
    });
    const [expired, acts] = transition(endpointSessionMachine, openSnap, { type: 'session.expired' });
    expect(expired.value).toBe('expired');
    expect(acts.map((a) => a.type)).toContain('recordExpired');
    const [reopening] = transition(endpointSessionMachine, expired, { type: 'session.reopen' });
    expect(reopening.value).toBe('reopening');
  });

  test('HOST-036: opens, heartbeats on the simulated clock before expiry, closes', async () => {
    const clock = new SimulatedClock();
    const { logic, calls } = scripted(clock);
    const actor = startSessionActor(logic, { clock, input: INPUT });
    await waitFor(actor, (s) => s.matches({ open: 'idle' }));
    expect(actor.getSnapshot().context.sessionId).toBe('ses_1');
    clock.advance(2_999);
    expect(calls.heartbeat).toBe(0);
    clock.advance(1);
    await waitFor(actor, (s) => s.context.heartbeatCount === 1 && s.matches({ open: 'idle' }));
    // The refreshed deadline moved: 9.999 s after the first grant the session is still open.
    clock.advance(6_999);
    await flush();
    expect(actor.getSnapshot().matches('open')).toBe(true);
    actor.send({ type: 'session.close' });
    await waitFor(actor, (s) => s.status === 'done');
    expect(calls.close).toBe(1);
    expect(calls.recorded).toEqual(['open', 'heartbeat', 'heartbeat', 'closed']);
  });

  test('HOST-036, issue 16: a heartbeated session stays open past its first and later expiry times', async () => {
    const clock = new SimulatedClock();
    const { logic, calls } = scripted(clock);
    const actor = startSessionActor(logic, { clock, input: INPUT });
    await waitFor(actor, (s) => s.matches({ open: 'idle' }));
    const firstExpiry = actor.getSnapshot().context.expiresAt ?? 0;
    // Three lifetimes of the first grant, a second at a time, letting each heartbeat's answer arrive.
    while (clock.now() < firstExpiry + 2 * INPUT.ttlMs) {
      clock.advance(1_000);
      await flush();
    }
    expect(actor.getSnapshot().matches('open')).toBe(true);
    expect(calls.recorded).not.toContain('expired');
    expect(actor.getSnapshot().context.expiresAt).toBeGreaterThan(clock.now());
    actor.stop();
  });

  test('HOST-036: expiry when heartbeats hang, then reopen on demand with a new session', async () => {
    const clock = new SimulatedClock();
    const { logic, calls } = scripted(clock, { heartbeatHangs: true });
    const actor = startSessionActor(logic, { clock, input: INPUT });
    await waitFor(actor, (s) => s.matches('open'));
    clock.advance(10_000);
    await waitFor(actor, (s) => s.matches('expired'));
    expect(calls.heartbeat).toBe(1);
    actor.send({ type: 'session.reopen' });
    await waitFor(actor, (s) => s.matches('open'));
    expect(actor.getSnapshot().context).toMatchObject({ sessionId: 'ses_2', reopenCount: 1 });
    expect(calls.recorded).toEqual(['open', 'expired', 'open']);
    actor.stop();
  });

  test('HOST-036: endpoint answering MHS.SESSION.EXPIRED to a heartbeat moves to expired', async () => {
    const clock = new SimulatedClock();
    const { logic } = scripted(clock, { heartbeatFails: ErrorCode.SESSION_EXPIRED });
    const actor = startSessionActor(logic, { clock, input: INPUT });
    await waitFor(actor, (s) => s.matches('open'));
    clock.advance(3_000);
    await waitFor(actor, (s) => s.matches('expired'));
    actor.stop();
  });

  test('HOST-036: a snapshot restored from JSON re-arms heartbeat and expiry; a bare restore would not', async () => {
    const clock = new SimulatedClock();
    const first = scripted(clock);
    const actor = startSessionActor(first.logic, { clock, input: INPUT });
    await waitFor(actor, (s) => s.matches({ open: 'idle' }));
    const persisted = JSON.parse(JSON.stringify(actor.getPersistedSnapshot()));
    actor.stop();
    expect(clock.pending()).toBe(0);

    // XState alone drops pending `after` timers on restore: nothing is armed.
    const bare = createActor(first.logic.provide({ delays: sessionDelays(clock) }), {
      snapshot: persisted,
      clock: xstateClock(clock),
      input: INPUT,
    });
    bare.start();
    expect(clock.pending()).toBe(0);
    bare.stop();

    // The restart happens later; heartbeat due time (t0+3 s) has passed while the host was down.
    clock.advance(4_000);
    const second = scripted(clock);
    const restored = startSessionActor(second.logic, { clock, input: INPUT, snapshot: persisted });
    expect(clock.pending()).toBeGreaterThan(0);
    clock.advance(0); // the overdue heartbeat fires at once
    await waitFor(restored, (s) => s.context.heartbeatCount === 1 && s.matches({ open: 'idle' }));
    expect(second.calls.heartbeat).toBe(1);
    expect(restored.getSnapshot().context.sessionId).toBe('ses_1');
    restored.stop();

    // Restored with hanging heartbeats: the absolute expiry still fires.
    const third = scripted(clock, { heartbeatHangs: true });
    const hung = startSessionActor(third.logic, { clock, input: INPUT, snapshot: persisted });
    clock.advance(6_000); // t0 + 10 s
    await waitFor(hung, (s) => s.matches('expired'));
    expect(third.calls.recorded).toContain('expired');
    hung.stop();
  });

  test('issue 16: a held session is never idle; released, it closes at its idle deadline, re-armed after a restore', async () => {
    const clock = new SimulatedClock();
    const { logic, calls } = scripted(clock);
    const actor = startSessionActor(logic, { clock, input: INPUT });
    actor.send({ type: 'session.hold' });
    await waitFor(actor, (s) => s.matches({ open: 'idle' }));
    // A released lease arms the idle deadline; a hold taken again before it cancels it.
    actor.send({ type: 'session.release', idleDueAt: clock.now() + 500 });
    actor.send({ type: 'session.hold' });
    clock.advance(2_000);
    await flush();
    expect(actor.getSnapshot().matches('open')).toBe(true);
    expect(actor.getSnapshot().context).toMatchObject({ holds: 1, idleDueAt: null });
    actor.send({ type: 'session.release', idleDueAt: clock.now() + 500 });
    const persisted = JSON.parse(JSON.stringify(actor.getPersistedSnapshot()));
    clock.advance(499);
    await flush();
    expect(actor.getSnapshot().matches('open')).toBe(true);
    clock.advance(1);
    await waitFor(actor, (s) => s.status === 'done');
    expect(calls.close).toBe(1);
    expect(calls.recorded.at(-1)).toBe('closed');

    // Restored after its idle deadline passed: the re-armed deadline closes it at once.
    const second = scripted(clock);
    const restored = startSessionActor(second.logic, { clock, input: INPUT, snapshot: persisted });
    clock.advance(0);
    await waitFor(restored, (s) => s.status === 'done');
    expect(second.calls.close).toBe(1);
  });
});
