/**
 * One turn of the supervisor → dispatch → harvest loop (RFC 0037 §"Execution loop" step 2, RFC 0039 §A), as the
 * dispatch node routes the supervisor's `OrchestratorDecision`:
 *
 *   routing ─ below floor ─▶ escalating ─ confirmed ─▶ routing … / ─ dropped ─▶ dropped
 *           ─ terminate ───▶ terminated            (the loop ends; the run completes)
 *           ─ ask-user ────▶ asking ─ answered ─▶ answered
 *           ─ fan-out refused ▶ refused             (fanOutPolicy 'reject' with several workers)
 *           ─ next-worker ─▶ dispatching ─ workers.settled ─▶ dispatched (one handoff machine per worker)
 *
 * Pure: the work is named effect actions (`escalate`, `ask`, `dispatch`, `refuse`) that the engine runs after
 * `transition()` decides, feeding back the outcome as the next event.
 */
import { assign, setup } from 'xstate';

/** The decision kinds this loop routes (orchestrator-decision.schema.json). */
export interface TurnDecision {
  kind: 'next-worker' | 'ask-user' | 'terminate' | string;
  nextWorkerIds?: string[];
  confidence?: number;
  prompt?: string;
  reason?: string;
}

export interface TurnInput {
  decision: TurnDecision;
  /** RFC 0039 §A confidence floor (>= 0.5). */
  floor: number;
  fanOutPolicy: 'sequential' | 'reject';
}

interface TurnContext extends TurnInput {
  confirmed: boolean;
}

export type TurnEvent =
  | { type: 'escalation.confirmed' }
  | { type: 'escalation.dropped' }
  | { type: 'answered' }
  | { type: 'workers.settled' };

/** Where a turn ends; `terminated` is the only one that ends the loop. */
export type TurnEnd = 'terminated' | 'dropped' | 'answered' | 'refused' | 'dispatched';

/** The effect a turn asks the engine to run. */
export type TurnEffect = 'escalate' | 'ask' | 'dispatch' | 'refuse';

const below = ({ context: c }: { context: TurnContext }): boolean =>
  !c.confirmed &&
  c.decision.kind !== 'ask-user' &&
  typeof c.decision.confidence === 'number' &&
  c.decision.confidence < c.floor;

/** The turn machine. */
export const supervisorTurnMachine = setup({
  types: { context: {} as TurnContext, events: {} as TurnEvent, input: {} as TurnInput },
  actions: {
    escalate: () => undefined,
    ask: () => undefined,
    dispatch: () => undefined,
    refuse: () => undefined,
  },
  guards: {
    belowFloor: below,
    terminate: ({ context }) => context.decision.kind === 'terminate',
    askUser: ({ context }) => context.decision.kind === 'ask-user',
    fanOutRefused: ({ context }) =>
      context.fanOutPolicy === 'reject' && (context.decision.nextWorkerIds?.length ?? 0) > 1,
  },
}).createMachine({
  id: 'supervisorTurn',
  context: ({ input }) => ({ ...input, confirmed: false }),
  initial: 'routing',
  states: {
    routing: {
      always: [
        { guard: 'belowFloor', target: 'escalating', actions: 'escalate' },
        { guard: 'terminate', target: 'terminated' },
        { guard: 'askUser', target: 'asking', actions: 'ask' },
        { guard: 'fanOutRefused', target: 'refused', actions: 'refuse' },
        { target: 'dispatching', actions: 'dispatch' },
      ],
    },
    escalating: {
      on: {
        'escalation.confirmed': { target: 'routing', actions: assign({ confirmed: true }) },
        'escalation.dropped': 'dropped',
      },
    },
    asking: { on: { answered: 'answered' } },
    dispatching: { on: { 'workers.settled': 'dispatched' } },
    terminated: { type: 'final' },
    dropped: { type: 'final' },
    answered: { type: 'final' },
    refused: { type: 'final' },
    dispatched: { type: 'final' },
  },
});
