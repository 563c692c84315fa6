/**
 * The planner→worker handoff statechart of one dispatched worker (RFC 0037, spec multi-agent-execution.md
 * §"Handoff state machine"): pending → dispatching → running → harvested, or ending failed / cancelled.
 *
 * Pure: every transition that occurs emits one `chain` action whose params are the `core.workflowChain.event`
 * record to append (phase, the phase that caused it, and the payload fields known from context and event).
 * The engine appends the records and links each `causationId` to the event of `causedBy` (`decided` = the
 * `runOrchestrator.decided` event). Decisions can be read without executing anything through `transition()`.
 */
import { assign, setup } from 'xstate';

/** `core.workflowChain.event` phases (run-event-payloads.schema.json `coreWorkflowChainEvent`). */
export type ChainPhase =
  | 'dispatch.began'
  | 'dispatch.succeeded'
  | 'dispatch.failed'
  | 'child.completed'
  | 'child.failed'
  | 'child.cancelled'
  | 'output.harvested';

/** What a chain record is caused by: the supervisor's decision or an earlier phase of the same worker. */
export type ChainCause = 'decided' | ChainPhase;

/** One transition record; `payload` is the `core.workflowChain.event` payload. */
export interface ChainRecord {
  phase: ChainPhase;
  causedBy: ChainCause;
  payload: {
    phase: ChainPhase;
    workerId: string;
    parentRunId: string;
    childRunId?: string;
    harvestedKeys?: string[];
    error?: Record<string, unknown>;
  };
}

export interface HandoffInput {
  workerId: string;
  parentRunId: string;
  /** True when the effective `outputMapping` is non-empty (only then does `output.harvested` fire). */
  hasOutputMapping: boolean;
}

export interface HandoffContext extends HandoffInput {
  childRunId: string | null;
  error: Record<string, unknown> | null;
  harvestedKeys: string[] | null;
}

export type HandoffEvent =
  | { type: 'handoff.begin' }
  | { type: 'handoff.created'; childRunId: string }
  | { type: 'handoff.createFailed'; error: Record<string, unknown> }
  | { type: 'handoff.childCompleted' }
  | { type: 'handoff.childFailed'; error: Record<string, unknown> }
  | { type: 'handoff.childCancelled'; error?: Record<string, unknown> }
  | { type: 'handoff.harvested'; keys: string[] };

/** The states a worker can be in (`completed` and `harvesting` are the two sides of `running → completed`). */
export type HandoffState =
  'pending' | 'dispatching' | 'running' | 'harvesting' | 'completed' | 'harvested' | 'failed' | 'cancelled';

/** The phase each machine event records, with the phase that caused it (spec §"Transition events"). */
export const TRANSITIONS: Readonly<Record<HandoffEvent['type'], { phase: ChainPhase; causedBy: ChainCause }>> = {
  'handoff.begin': { phase: 'dispatch.began', causedBy: 'decided' },
  'handoff.created': { phase: 'dispatch.succeeded', causedBy: 'dispatch.began' },
  'handoff.createFailed': { phase: 'dispatch.failed', causedBy: 'dispatch.began' },
  'handoff.childCompleted': { phase: 'child.completed', causedBy: 'dispatch.succeeded' },
  'handoff.childFailed': { phase: 'child.failed', causedBy: 'dispatch.succeeded' },
  'handoff.childCancelled': { phase: 'child.cancelled', causedBy: 'dispatch.succeeded' },
  'handoff.harvested': { phase: 'output.harvested', causedBy: 'child.completed' },
};

/** The machine event that produces `phase` (to rebuild a worker's state from its recorded chain). */
export function eventForPhase(phase: ChainPhase, payload: ChainRecord['payload']): HandoffEvent {
  switch (phase) {
    case 'dispatch.began':
      return { type: 'handoff.begin' };
    case 'dispatch.succeeded':
      return { type: 'handoff.created', childRunId: payload.childRunId ?? '' };
    case 'dispatch.failed':
      return { type: 'handoff.createFailed', error: payload.error ?? {} };
    case 'child.completed':
      return { type: 'handoff.childCompleted' };
    case 'child.failed':
      return { type: 'handoff.childFailed', error: payload.error ?? {} };
    case 'child.cancelled':
      return payload.error
        ? { type: 'handoff.childCancelled', error: payload.error }
        : { type: 'handoff.childCancelled' };
    case 'output.harvested':
      return { type: 'handoff.harvested', keys: payload.harvestedKeys ?? [] };
  }
}

function record(ctx: HandoffContext, ev: HandoffEvent): ChainRecord {
  const t = TRANSITIONS[ev.type];
  const childRunId = ev.type === 'handoff.created' ? ev.childRunId : ctx.childRunId;
  const error =
    ev.type === 'handoff.createFailed' || ev.type === 'handoff.childFailed' || ev.type === 'handoff.childCancelled'
      ? ev.error
      : undefined;
  return {
    phase: t.phase,
    causedBy: t.causedBy,
    payload: {
      phase: t.phase,
      workerId: ctx.workerId,
      parentRunId: ctx.parentRunId,
      // Absent on dispatch.began / dispatch.failed: the child was not created.
      ...(childRunId && t.phase !== 'dispatch.began' && t.phase !== 'dispatch.failed' ? { childRunId } : {}),
      ...(ev.type === 'handoff.harvested' ? { harvestedKeys: ev.keys } : {}),
      ...(error ? { error } : {}),
    },
  };
}

/** The handoff machine of one worker. Every transition runs the `chain` action with its {@link ChainRecord}. */
export const handoffMachine = setup({
  types: {
    context: {} as HandoffContext,
    events: {} as HandoffEvent,
    input: {} as HandoffInput,
  },
  actions: {
    // Replaced by the engine with `.provide()` when run as an actor; transition() returns it as data.
    chain: (_, _params: ChainRecord) => undefined,
  },
  guards: {
    hasOutputMapping: ({ context }) => context.hasOutputMapping,
  },
}).createMachine({
  id: 'handoff',
  context: ({ input }) => ({ ...input, childRunId: null, error: null, harvestedKeys: null }),
  initial: 'pending',
  states: {
    pending: {
      on: {
        'handoff.begin': {
          target: 'dispatching',
          actions: { type: 'chain', params: ({ context, event }) => record(context, event) },
        },
      },
    },
    dispatching: {
      on: {
        'handoff.created': {
          target: 'running',
          actions: [
            { type: 'chain', params: ({ context, event }) => record(context, event) },
            assign({ childRunId: ({ event }) => event.childRunId }),
          ],
        },
        'handoff.createFailed': {
          target: 'failed',
          actions: [
            { type: 'chain', params: ({ context, event }) => record(context, event) },
            assign({ error: ({ event }) => event.error }),
          ],
        },
      },
    },
    running: {
      on: {
        'handoff.childCompleted': [
          {
            guard: 'hasOutputMapping',
            target: 'harvesting',
            actions: { type: 'chain', params: ({ context, event }) => record(context, event) },
          },
          { target: 'completed', actions: { type: 'chain', params: ({ context, event }) => record(context, event) } },
        ],
        'handoff.childFailed': {
          target: 'failed',
          actions: [
            { type: 'chain', params: ({ context, event }) => record(context, event) },
            assign({ error: ({ event }) => event.error }),
          ],
        },
        'handoff.childCancelled': {
          target: 'cancelled',
          actions: [
            { type: 'chain', params: ({ context, event }) => record(context, event) },
            assign({ error: ({ event }) => event.error ?? null }),
          ],
        },
      },
    },
    harvesting: {
      on: {
        'handoff.harvested': {
          target: 'harvested',
          actions: [
            { type: 'chain', params: ({ context, event }) => record(context, event) },
            assign({ harvestedKeys: ({ event }) => event.keys }),
          ],
        },
      },
    },
    completed: { type: 'final' },
    harvested: { type: 'final' },
    failed: { type: 'final' },
    cancelled: { type: 'final' },
  },
});
