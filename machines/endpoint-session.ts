/**
 * The MHS session statechart of one (endpoint, device, capability scope) (wire contract §5, HOST-034, 036):
 * opening → open (idle ⇄ heartbeating) → expired → reopening → open … → closing → closed.
 *
 * Pure: the I/O (open, heartbeat, close) are named actors and the ledger writes are named actions, all
 * supplied by the engine with `.provide()`. Deadlines are data: `expiresAt` and `heartbeatDueAt` are absolute
 * times in the context, and the `after` delays are computed from them against the injected clock, so a snapshot
 * restored after a restart re-arms them (XState does not persist delayed events: see {@link startSessionActor}).
 *
 * Leases (issue 16): `holds` counts calls in flight on the session; a held session is never idle. The idle
 * deadline `idleDueAt` is set only when the last hold is released (by the engine, which knows the scope's idle
 * time) and closes the session when it passes with no hold taken meanwhile.
 */
import { assign, cancel, createActor, fromPromise, raise, setup } from 'xstate';
import type { Actor, Snapshot } from 'xstate';
import type { Clock } from '../src/core/index.js';

/** What the endpoint granted on open or heartbeat, with the local time it was received. */
export interface SessionGrant {
  sessionId: string;
  /** Absolute expiry (ms since epoch) from the session's `expires_at`. */
  expiresAt: number;
  heartbeatIntervalMs: number;
  /** Local clock time when the grant arrived. */
  now: number;
}

/** Input of the open actor; `previousSessionId` is set when reopening after expiry. */
export interface OpenSessionInput {
  endpointId: string;
  deviceId: string;
  capabilities: string[];
  ttlMs: number;
  previousSessionId: string | null;
}

export interface SessionInput {
  endpointId: string;
  deviceId: string;
  /** Only the capabilities the task needs (HOST-034). */
  capabilities: string[];
  ttlMs: number;
}

export interface SessionContext extends SessionInput {
  sessionId: string | null;
  expiresAt: number | null;
  heartbeatDueAt: number | null;
  heartbeatIntervalMs: number;
  /** Local time of the last grant; the fallback base for delays when no clock is provided. */
  grantedAt: number | null;
  reopenCount: number;
  heartbeatCount: number;
  error: { code: string; message: string } | null;
  /** Calls in flight on this session (leases held); while above zero the session is not idle. */
  holds: number;
  /** Absolute time at which the unheld session closes as idle; null = no idle close (e.g. a task's session). */
  idleDueAt: number | null;
}

export type SessionEvent =
  | { type: 'session.heartbeat' }
  | { type: 'session.expired' }
  | { type: 'session.reopen' }
  | { type: 'session.close' }
  | { type: 'session.rearm' }
  /** A call takes a lease: the session is in use until the matching release. */
  | { type: 'session.hold' }
  /** A call ends; when no hold is left the session closes as idle at `idleDueAt` (null: never). */
  | { type: 'session.release'; idleDueAt: number | null }
  /** The idle deadline passed (a delayed event this machine raises itself). */
  | { type: 'session.idle' };

/**
 * When the next heartbeat is due: at most one heartbeat interval after the grant and always before expiry,
 * leaving a fifth of the remaining lifetime as margin (HOST-036).
 */
export function heartbeatDue(grant: SessionGrant): number {
  const life = Math.max(0, grant.expiresAt - grant.now);
  const byExpiry = grant.expiresAt - Math.ceil(life / 5);
  const byInterval = grant.heartbeatIntervalMs > 0 ? grant.now + grant.heartbeatIntervalMs : byExpiry;
  return Math.max(grant.now, Math.min(byInterval, byExpiry));
}

function errorOf(e: unknown): { code: string; message: string } {
  const o = (e ?? {}) as { code?: unknown; message?: unknown };
  return { code: typeof o.code === 'string' ? o.code : 'MHS.HOST.INTERNAL', message: String(o.message ?? e) };
}

/** The session machine. Supply `openSession`, `heartbeat`, `closeSession` (and optionally the record actions). */
export const endpointSessionMachine = setup({
  types: {
    context: {} as SessionContext,
    events: {} as SessionEvent,
    input: {} as SessionInput,
  },
  actors: {
    openSession: fromPromise<SessionGrant, OpenSessionInput>(async () => {
      throw new Error('openSession not provided');
    }),
    heartbeat: fromPromise<SessionGrant, { sessionId: string }>(async () => {
      throw new Error('heartbeat not provided');
    }),
    closeSession: fromPromise<void, { sessionId: string }>(async () => undefined),
  },
  actions: {
    applyGrant: assign(({ context }, grant: SessionGrant) => ({
      ...context,
      sessionId: grant.sessionId,
      expiresAt: grant.expiresAt,
      heartbeatIntervalMs: grant.heartbeatIntervalMs,
      heartbeatDueAt: heartbeatDue(grant),
      grantedAt: grant.now,
      error: null,
    })),
    recordOpened: () => undefined,
    recordHeartbeat: () => undefined,
    recordExpired: () => undefined,
    recordClosed: () => undefined,
  },
  guards: {
    endpointSaysGone: ({ event }) => {
      const code = errorOf((event as unknown as { error: unknown }).error).code;
      return code === 'MHS.SESSION.EXPIRED' || code === 'MHS.SESSION.UNKNOWN';
    },
    idleLapsed: ({ context }) => !context.holds && context.idleDueAt != null,
  },
  delays: {
    // Fallback without a clock: relative to the last grant. The engine provides clock-based ones (sessionDelays).
    untilHeartbeat: ({ context }) => Math.max(0, (context.heartbeatDueAt ?? 0) - (context.grantedAt ?? 0)),
    untilExpiry: ({ context }) => Math.max(0, (context.expiresAt ?? 0) - (context.grantedAt ?? 0)),
    untilIdle: ({ context }) => Math.max(0, (context.idleDueAt ?? 0) - (context.grantedAt ?? 0)),
  },
}).createMachine({
  id: 'endpointSession',
  context: ({ input }) => ({
    ...input,
    sessionId: null,
    expiresAt: null,
    heartbeatDueAt: null,
    heartbeatIntervalMs: 0,
    grantedAt: null,
    reopenCount: 0,
    heartbeatCount: 0,
    error: null,
    holds: 0,
    idleDueAt: null,
  }),
  initial: 'opening',
  on: {
    'session.hold': {
      actions: [assign({ holds: ({ context }) => (context.holds || 0) + 1, idleDueAt: null }), cancel('idle')],
    },
    'session.release': {
      actions: [
        assign(({ context, event }) => {
          const holds = Math.max(0, (context.holds || 0) - 1);
          return { holds, idleDueAt: holds === 0 ? event.idleDueAt : null };
        }),
        cancel('idle'),
        raise({ type: 'session.idle' }, { id: 'idle', delay: 'untilIdle' }),
      ],
    },
  },
  states: {
    opening: {
      invoke: {
        src: 'openSession',
        input: ({ context }) => ({
          endpointId: context.endpointId,
          deviceId: context.deviceId,
          capabilities: context.capabilities,
          ttlMs: context.ttlMs,
          previousSessionId: null,
        }),
        onDone: {
          target: 'open',
          actions: [{ type: 'applyGrant', params: ({ event }) => event.output }, 'recordOpened'],
        },
        onError: { target: 'failed', actions: assign({ error: ({ event }) => errorOf(event.error) }) },
      },
      on: { 'session.close': 'closed' },
    },
    open: {
      initial: 'idle',
      // Re-arms the idle deadline on every entry, also after a restore (XState drops delayed events).
      // (An idle event raised while held or without a deadline is ignored by the `idleLapsed` guard.)
      entry: [cancel('idle'), raise({ type: 'session.idle' }, { id: 'idle', delay: 'untilIdle' })],
      on: {
        'session.expired': 'expired',
        'session.close': 'closing',
        'session.idle': { guard: 'idleLapsed', target: 'closing' },
        // Re-enter to re-arm the delayed events from the absolute deadlines (after a restore).
        'session.rearm': { target: 'open', reenter: true },
      },
      states: {
        // The expiry timer lives in the substates, so each heartbeat's grant re-arms it (on `open` it would keep
        // the first grant's `expiresAt` and expire a renewed session: issue 16, an approval that waits 2 minutes).
        idle: {
          after: { untilHeartbeat: { target: 'heartbeating' }, untilExpiry: { target: '#endpointSession.expired' } },
          on: { 'session.heartbeat': 'heartbeating' },
        },
        heartbeating: {
          after: { untilExpiry: { target: '#endpointSession.expired' } },
          invoke: {
            src: 'heartbeat',
            input: ({ context }) => ({ sessionId: context.sessionId ?? '' }),
            onDone: {
              target: 'idle',
              actions: [
                { type: 'applyGrant', params: ({ event }) => event.output },
                assign({ heartbeatCount: ({ context }) => context.heartbeatCount + 1 }),
                'recordHeartbeat',
              ],
            },
            onError: [
              { guard: 'endpointSaysGone', target: '#endpointSession.expired' },
              {
                // Transient failure: retry halfway to expiry, still before it (HOST-036).
                target: 'idle',
                actions: assign({
                  error: ({ event }) => errorOf(event.error),
                  heartbeatDueAt: ({ context }) =>
                    (context.heartbeatDueAt ?? 0) +
                    Math.floor(((context.expiresAt ?? 0) - (context.heartbeatDueAt ?? 0)) / 2),
                }),
              },
            ],
          },
        },
      },
    },
    expired: {
      entry: ['recordExpired', cancel('idle'), raise({ type: 'session.idle' }, { id: 'idle', delay: 'untilIdle' })],
      on: {
        'session.reopen': 'reopening',
        'session.close': 'closed',
        'session.idle': { guard: 'idleLapsed', target: 'closed' },
      },
    },
    reopening: {
      invoke: {
        src: 'openSession',
        input: ({ context }) => ({
          endpointId: context.endpointId,
          deviceId: context.deviceId,
          capabilities: context.capabilities,
          ttlMs: context.ttlMs,
          previousSessionId: context.sessionId,
        }),
        onDone: {
          target: 'open',
          actions: [
            { type: 'applyGrant', params: ({ event }) => event.output },
            assign({ reopenCount: ({ context }) => context.reopenCount + 1 }),
            'recordOpened',
          ],
        },
        onError: { target: 'failed', actions: assign({ error: ({ event }) => errorOf(event.error) }) },
      },
      on: { 'session.close': 'closed' },
    },
    closing: {
      invoke: {
        src: 'closeSession',
        input: ({ context }) => ({ sessionId: context.sessionId ?? '' }),
        onDone: 'closed',
        onError: 'closed',
      },
    },
    closed: { type: 'final', entry: 'recordClosed' },
    failed: { type: 'final' },
  },
});

export type EndpointSessionMachine = typeof endpointSessionMachine;
export type SessionActor = Actor<EndpointSessionMachine>;

/** Delay implementations computed from the absolute deadlines in context and the injected clock. */
export function sessionDelays(clock: Clock) {
  return {
    untilHeartbeat: ({ context }: { context: SessionContext }) =>
      Math.max(0, (context.heartbeatDueAt ?? clock.now()) - clock.now()),
    untilExpiry: ({ context }: { context: SessionContext }) =>
      Math.max(0, (context.expiresAt ?? clock.now()) - clock.now()),
    untilIdle: ({ context }: { context: SessionContext }) =>
      Math.max(0, (context.idleDueAt ?? clock.now()) - clock.now()),
  };
}

/** Adapts the host {@link Clock} to XState's clock option. */
export function xstateClock(clock: Clock) {
  return {
    setTimeout: (fn: (...args: unknown[]) => void, ms: number) => clock.setTimeout(() => fn(), ms),
    clearTimeout: (handle: unknown) => clock.clearTimeout(handle as ReturnType<Clock['setTimeout']>),
  };
}

/**
 * Starts a session actor on `clock`, either fresh (`input`) or from a persisted snapshot. After a restore it
 * sends `session.rearm`, because XState drops pending `after` timers on restore: the machine re-enters `open`
 * and re-schedules heartbeat and expiry from the absolute deadlines in its context.
 */
export function startSessionActor(
  logic: EndpointSessionMachine,
  opts: { clock: Clock; input: SessionInput; snapshot?: Snapshot<unknown> },
): SessionActor {
  const provided = logic.provide({ delays: sessionDelays(opts.clock) });
  const actor = createActor(provided, {
    input: opts.input,
    clock: xstateClock(opts.clock),
    ...(opts.snapshot ? { snapshot: opts.snapshot as never } : {}),
  });
  actor.start();
  if (opts.snapshot) actor.send({ type: 'session.rearm' });
  return actor;
}
